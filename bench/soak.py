"""Soak: concurrent runs killed with SIGKILL, cut off from their store, or given a full disk; every event must be stored once.

    .venv/bin/python -m bench.soak [--runs 6] [--concurrency 3] [--kills-per-run 2] [--latency 0.2] [--time-limit 300]
        [--faults kill,outage,full] [--outage 1-10] [--patience 5]

Each run is a process of its own (``--worker``) on the fake backend with ``--latency`` seconds per
model call, over the demo corpus embedded with a hashing embedder (no model to load: the
soak tests the run store and the journal, not retrieval). A run is killed with SIGKILL at
a random moment up to ``--kills-per-run`` times; after each kill two processes resume it
at the same moment, and exactly one may go on (the other must be refused). At the end
every run's stored events are compared with an uninterrupted reference run of the same
claim and protocol: events lost and events duplicated must both be 0, and so must runs left
``running`` by a dead process, spill files left unstored, and verdicts that differ from the
reference's. Loopback only (no web search); bounded by ``--runs`` and ``--time-limit``. Exit
status 1 if anything was lost, duplicated, wrongly admitted, orphaned or ruled differently.

Faults (``--faults``, one drawn per run by the seed): ``kill`` as above; ``outage``, the run's
store refuses every statement for a time drawn from ``--outage`` seconds (the worker's engine
made to raise the OperationalError a stopped PostgreSQL raises); ``full``, the same with
SQLite's "database or disk is full". An outage longer than ``--patience`` pauses the run (its
events spilled to disk); the soak then resumes it, two processes at once, as after a kill.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = [
    "Masks reduce transmission of respiratory viruses",
    "Vaccines cause more harm than the diseases they prevent",
    "Hand washing lowers the spread of infections in schools",
]
REFUSED = 3  # a worker's exit status when its resume was refused because another process owns the run


class HashEmbedder:
    """Deterministic 384-dimensional vectors from a hash: instant, and the same in every process."""

    name = "hash-384"
    dimension = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32))
        out = np.array(rows, dtype=np.float32).reshape(len(texts), self.dimension)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def soak_config(protocol: str):  # type: ignore[no-untyped-def]
    """Every role on the fake backend, the demo corpus, no web search (loopback only)."""
    from pipelines.core.config import RunConfig

    config = RunConfig().with_backend("fake")
    retrieval = config.retrieval.model_copy(update={"web_search": False})
    return config.model_copy(update={"corpus": "demo", "protocol": protocol, "retrieval": retrieval})


def soak_services(data_dir: Path, latency: float):  # type: ignore[no-untyped-def]
    from pipelines.core.config import AppSettings
    from pipelines.run.llm.fake import FakeChatModel
    from pipelines.run.runner import Services
    from pipelines.run.tools.web import OfflineSearch

    services = Services.create(AppSettings(data_dir=data_dir), embedder=HashEmbedder())
    services.response_cache = None
    services.web = OfflineSearch()
    services.chat_override = FakeChatModel(latency_s=latency)
    return services


# --- the worker: one run started or resumed in this process --------------------------------------


def worker(args: argparse.Namespace) -> int:
    from pipelines.core.errors import RunBusyError
    from pipelines.record import event_writer
    from pipelines.run.runner import resume_run, start_run
    from tests.faults import StoreOutage

    event_writer.STORE_PATIENCE_S = args.patience
    services = soak_services(Path(args.data_dir), args.latency)
    try:
        if args.worker == "start":
            handle = start_run(args.claim, soak_config(args.protocol), services, run_id=args.run_id)
        else:
            handle = resume_run(args.run_id, services)
    except RunBusyError as exc:
        print(json.dumps({"refused": str(exc)}), flush=True)
        return REFUSED
    print("started", flush=True)
    if args.outage_for:  # the store goes away this long, this long after the run started
        outage = StoreOutage(services.store.engine)
        timer = threading.Timer(args.outage_after, outage.start, kwargs={"seconds": args.outage_for, "kind": args.outage_kind})
        timer.daemon = True
        timer.start()
    for _ in handle.stream():
        pass
    print(json.dumps({"status": handle.status}), flush=True)
    return 0


# --- the parent: launch, kill, resume, compare ---------------------------------------------------


@dataclass
class Tally:
    runs: int = 0
    completed: int = 0
    kills: int = 0
    late_kills: int = 0  # a SIGKILL that came after the run's record was complete (not counted in kills)
    resume_races: int = 0
    refused_correctly: int = 0
    wrongly_admitted: int = 0
    lost: int = 0
    duplicated: int = 0
    extra_calls: int = 0  # model calls made again because the kill cut them off before their answer was journalled
    outages: int = 0  # store outages (database away or disk full) injected
    outage_seconds: list[float] = field(default_factory=list)
    paused: int = 0  # runs an outage paused (longer than the writer's patience), then resumed
    orphaned: int = 0  # runs left "running" by a process that is gone
    spills_left: int = 0  # spill files never stored
    verdicts_differ: int = 0  # resumed runs whose verdict is not the uninterrupted run's
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def spawn(data_dir: Path, latency: float, *args: str, patience: float = 5.0) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "-m",
        "bench.soak",
        "--data-dir",
        str(data_dir),
        "--latency",
        str(latency),
        "--patience",
        str(patience),
        *args,
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def started(proc: subprocess.Popen[str]) -> bool:
    """Wait for the worker's first line: True once its run is going, False if it was refused or failed to start."""
    assert proc.stdout is not None
    return proc.stdout.readline().strip() == "started"


def kill_at_random(proc: subprocess.Popen[str], rng: random.Random, window_s: float) -> bool:
    """SIGKILL the worker at a random moment of ``window_s``; False if it finished first."""
    deadline = time.monotonic() + rng.uniform(0.0, window_s)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def content(events: list) -> tuple[Counter[str], dict[str, str], int]:  # type: ignore[type-arg]
    """What a run's record says, independent of timing: event fingerprints, streamed text per turn, model calls."""
    from pipelines.core.events import ArgumentDelta, ModelCallCompleted, RunFailed, RunInterrupted, RunResumed, RunStarted
    from pipelines.record.journal import fingerprint

    kinds: Counter[str] = Counter()
    streamed: dict[str, str] = {}
    calls = 0
    for e in events:
        if isinstance(e, RunStarted | RunResumed | RunFailed | RunInterrupted):
            continue
        if isinstance(e, ArgumentDelta):
            streamed[e.turn_id] = streamed.get(e.turn_id, "") + e.text
        elif isinstance(e, ModelCallCompleted):
            calls += 1
        else:
            kinds[fingerprint(e)] += 1
    return kinds, streamed, calls


def compare(reference: list, record: list, tally: Tally, run_id: str) -> None:  # type: ignore[type-arg]
    want, want_text, want_calls = content(reference)
    got, got_text, got_calls = content(record)
    lost = sum((want - got).values())
    duplicated = sum((got - want).values())
    for turn in want_text.keys() | got_text.keys():
        a, b = want_text.get(turn, ""), got_text.get(turn, "")
        if a == b:
            continue
        if b.startswith(a):
            duplicated += 1
        elif a.startswith(b):
            lost += 1
        else:
            lost += 1
            duplicated += 1
    if lost or duplicated:
        tally.problems.append(f"{run_id}: {lost} lost, {duplicated} duplicated")
    tally.lost += lost
    tally.duplicated += duplicated
    tally.extra_calls += max(0, got_calls - want_calls)


def soak(args: argparse.Namespace) -> Tally:
    from pipelines.record.digest import digest
    from pipelines.record.store import RunStore
    from pipelines.run.llm.fake import FakeChatModel
    from pipelines.run.runner import stream_run

    faults = args.faults.split(",")
    low, high = (float(x) for x in args.outage.split("-"))

    data_dir = Path(tempfile.mkdtemp(prefix="debatedesk-soak-"))
    services = soak_services(data_dir, 0.0)
    services.ensure_corpus("demo")
    protocols = args.protocols.split(",")
    references: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    for claim in CLAIMS:
        for protocol in protocols:
            services.chat_override = FakeChatModel()
            references[(claim, protocol)] = list(stream_run(claim, soak_config(protocol), services))
    store = RunStore(services.settings.sqlite_url)
    tally = Tally()
    ends = time.monotonic() + args.time_limit
    plans = [(f"soak-{i:03d}", CLAIMS[i % len(CLAIMS)], protocols[i % len(protocols)]) for i in range(args.runs)]

    def lifecycle(run_id: str, claim: str, protocol: str) -> None:
        """Start the run, kill it at random up to --kills-per-run times, each time racing two resumes; then check it."""
        if time.monotonic() > ends:
            with tally.lock:
                tally.problems.append(f"{run_id}: not started (time limit)")
            return
        rng = random.Random(f"{args.seed}-{run_id}")
        fault = rng.choice(faults)
        extra: list[str] = []
        if fault in ("outage", "full"):
            seconds = round(rng.uniform(low, high), 1)
            extra = ["--outage-after", f"{rng.uniform(0.0, args.kill_window):.2f}", "--outage-for", str(seconds)]
            extra += ["--outage-kind", "down" if fault == "outage" else "full"]
            with tally.lock:
                tally.outages += 1
                tally.outage_seconds.append(seconds)
        proc: subprocess.Popen[str] | None = spawn(
            data_dir, args.latency, "--worker", "start", "--run-id", run_id, "--claim", claim, "--protocol", protocol, *extra,
            patience=args.patience,
        )  # fmt: skip
        kills = pauses = 0
        while proc is not None:
            if not started(proc):
                proc.wait()
                break
            may_kill = fault == "kill" and kills < args.kills_per_run and time.monotonic() < ends
            if not may_kill or not kill_at_random(proc, rng, args.kill_window):
                proc.wait()
                run = store.get_run(run_id)
                gone = run is not None and run.status == "running" and not owner_alive(store.owner_of(run_id))
                # Paused by the outage (or ended while the store was still away, its end in a spill): resume it, as a person would.
                if run is not None and (run.status in ("interrupted", "failed") or gone) and pauses < 3:
                    pauses += 1
                    with tally.lock:
                        tally.paused += 1
                    proc = race_to_resume(data_dir, args, run_id, tally)
                    continue
                break
            run = store.get_run(run_id)
            if run is not None and run.status == "completed":  # killed after its record was complete: nothing to resume
                with tally.lock:
                    tally.late_kills += 1
                break
            kills += 1
            with tally.lock:
                tally.kills += 1
            proc = race_to_resume(data_dir, args, run_id, tally)
        with tally.lock:
            tally.runs += 1
            run = store.get_run(run_id)
            if run is None:
                tally.problems.append(f"{run_id}: never stored")
            elif run.status != "completed":
                tally.problems.append(f"{run_id}: ended {run.status}")
            else:
                tally.completed += 1
                record = store.events(run_id)
                compare(references[(claim, protocol)], record, tally, run_id)
                want, got = digest(references[(claim, protocol)]).verdict, digest(record).verdict
                if (want and want.label) != (got and got.label):
                    tally.verdicts_differ += 1
                    tally.problems.append(f"{run_id}: verdict {got and got.label} where the uninterrupted run has {want and want.label}")

    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        for future in [pool.submit(lifecycle, *plan) for plan in plans]:
            future.result()
    for run in store.list_runs(limit=10_000):  # before any reconcile: a run "running" whose owner is gone was left behind
        if run.status == "running" and not owner_alive(owner := store.owner_of(run.id)):
            tally.orphaned += 1
            tally.problems.append(f"{run.id}: left running by {owner}, which is gone")
    tally.spills_left = len(list((data_dir / "spill").glob("*.jsonl")))
    return tally


def owner_alive(owner: str | None) -> bool:
    """Whether the process a run's owner names (host:pid:token, this host) still runs."""
    pid = (owner or "").split(":")[1] if (owner or "").count(":") >= 2 else ""
    return pid.isdigit() and psutil.pid_exists(int(pid))


def race_to_resume(data_dir: Path, args: argparse.Namespace, run_id: str, tally: Tally) -> subprocess.Popen[str] | None:
    """Two processes resume the killed (or paused) run at once: exactly one may go on; returns the one that did."""
    pair = [spawn(data_dir, args.latency, "--worker", "resume", "--run-id", run_id, patience=args.patience) for _ in range(2)]
    going = [p for p in pair if started(p)]
    refused = [p for p in pair if p not in going and p.wait() == REFUSED]
    with tally.lock:
        tally.resume_races += 1
        if len(going) == 1 and len(refused) == 1:
            tally.refused_correctly += 1
        elif len(going) > 1:
            tally.wrongly_admitted += 1
            tally.problems.append(f"{run_id}: {len(going)} resumes went on at once")
        elif going:  # one went on, the other failed for another reason (not refused): say so
            tally.problems.append(f"{run_id}: the second resume ended with status {[p.returncode for p in pair if p not in going]}")
        else:
            tally.problems.append(f"{run_id}: neither resume went on")
    for extra in going[1:]:
        extra.wait()
    return going[0] if going else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=6, help="runs in all")
    parser.add_argument("--concurrency", type=int, default=3, help="runs going at once")
    parser.add_argument("--kills-per-run", type=int, default=2, help="most SIGKILLs one run gets")
    parser.add_argument("--kill-window", type=float, default=1.0, help="a kill comes at a random moment this many seconds after a start")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake model call")
    parser.add_argument("--protocols", default="single,toolmad", help="comma-separated protocols the runs cycle through")
    parser.add_argument("--time-limit", type=float, default=300.0, help="stop launching after this many seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", default="kill,outage,full", help="comma-separated faults the runs draw from: kill, outage, full")
    parser.add_argument("--outage", default="1-10", help="an outage's length in seconds, drawn from this range")
    parser.add_argument("--patience", type=float, default=5.0, help="seconds the event writer waits for the store before pausing")
    parser.add_argument("--outage-after", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--outage-for", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--outage-kind", default="down", help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=["start", "resume"], help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--run-id", help=argparse.SUPPRESS)
    parser.add_argument("--claim", help=argparse.SUPPRESS)
    parser.add_argument("--protocol", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    started_at = time.monotonic()
    tally = soak(args)
    print(f"runs: {tally.runs} ({tally.completed} completed)")
    print(f"kills (SIGKILL) mid-run: {tally.kills} (and {tally.late_kills} after a run had finished)")
    print(f"events lost: {tally.lost}")
    print(f"events duplicated: {tally.duplicated}")
    print(f"resume races: {tally.resume_races}, refused correctly: {tally.refused_correctly}, both went on: {tally.wrongly_admitted}")
    print(f"model calls made again after a kill cut them off: {tally.extra_calls}")
    spans = f" of {min(tally.outage_seconds):.1f}-{max(tally.outage_seconds):.1f} s" if tally.outage_seconds else ""
    print(f"store outages (away or disk full): {tally.outages}{spans}, runs they paused and were resumed: {tally.paused}")
    print(f"runs left running by a dead process: {tally.orphaned}")
    print(f"spill files left unstored: {tally.spills_left}")
    print(f"verdicts that differ from the uninterrupted run's: {tally.verdicts_differ}")
    print(f"wall time: {time.monotonic() - started_at:.0f} s")
    for problem in tally.problems:
        print(f"problem: {problem}")
    ok = (
        tally.lost == 0
        and tally.duplicated == 0
        and tally.wrongly_admitted == 0
        and tally.completed == tally.runs
        and tally.orphaned == 0
        and tally.spills_left == 0
        and tally.verdicts_differ == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
