"""Peak resident memory of the app process and of the embedded model's server over a batch of claims.

    .venv/bin/python bench/peak_memory.py [--claims 100] [--skip N] [--protocol desk] [--cache-ram MIB] [--records FILE.jsonl]
    .venv/bin/python bench/peak_memory.py --claims 1 --protocol single --corpus demo   # one debate on the demo corpus

Runs the claims one after another the way the app does (Services + stream_run, run store on,
web search off, response cache off so every call reaches the model) in a child process: the
first N Check-COVID dev claims over the check-covid corpus (indexed into the data folder on
first use), or the demo claim over the demo corpus. Every --interval seconds it reads from
/proc the child's resident memory and the llama.cpp server's (a separate process the app
starts once and reuses: ``server.json`` in the model cache), and reports the peak of each and
of both together, with each claim's seconds and the server's memory after it. ``--cache-ram``
stops the recorded server first and starts the next with that prompt cache (``--cache-ram``
of llama-server, in MiB; DEBATEDESK_LLAMA_CACHE_RAM); without it, the app's setting. Prints
``uptime`` load averages at the start and the end: on a shared machine seconds are only
comparable within one run. ``--skip N`` starts after the first N claims (a batch cut short goes on where it stopped;
the server, if still running, keeps what it held, the app's process starts afresh).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from pipelines.core.config import RunConfig

DEMO_CLAIM = "Masks reduce transmission of respiratory viruses"


def rss_kib(pid: int, field: str = "VmRSS") -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def uncached_config(protocol: str, corpus: str, backend: str = "embedded") -> RunConfig:
    """A run on ``backend`` over ``corpus``, web search off, response cache off: every call reaches the model."""
    from pipelines.core.config import RunConfig

    config = RunConfig(protocol=protocol, corpus=corpus).with_backend(backend)
    return config.model_copy(
        update={
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            **{r: config.role(r).model_copy(update={"cache": "off"}) for r in ("debater", "judge", "scorer")},
        }
    )


def claims(corpus: str, count: int, skip: int = 0) -> list[str]:
    """``count`` Check-COVID dev claims after the first ``skip``, or the demo claim."""
    if corpus == "demo":
        return [DEMO_CLAIM] * count
    from pipelines.core.config import AppSettings
    from pipelines.eval.datasets import load_dataset

    dataset = load_dataset("check-covid", "dev", checkcovid_dir=AppSettings().checkcovid_dir)
    return [item.claim for item in dataset.items[skip : skip + count]]


def child(protocol: str, corpus: str, count: int, backend: str, skip: int = 0) -> None:
    """The measured process: load what the app loads, report, run each claim, report each one and the high-water mark."""
    from pipelines.core.config import AppSettings
    from pipelines.record.digest import digest
    from pipelines.run.runner import stream_run
    from pipelines.run.services import Services

    services = Services.create(AppSettings())
    services.ensure_corpus(corpus)
    config = uncached_config(protocol, corpus, backend)
    services.embedder.embed(["warm up"])
    print(json.dumps({"phase": "loaded", "rss_kib": rss_kib(os.getpid())}), flush=True)
    for index, claim in enumerate(claims(corpus, count, skip), start=skip + 1):
        started = time.perf_counter()
        outcome = digest(stream_run(claim, config, services)).outcome
        seconds = time.perf_counter() - started
        print(json.dumps({"phase": "claim", "index": index, "seconds": round(seconds, 1), "verdict": outcome}), flush=True)
    print(json.dumps({"phase": "done", "hwm_kib": rss_kib(os.getpid(), "VmHWM")}), flush=True)


def stop_recorded_server() -> None:
    from pipelines.core.config import AppSettings
    from pipelines.run.llm.embedded.server import stop_server

    stop_server(AppSettings().model_cache)


def server_pid(state_file: Path) -> int | None:
    try:
        return int(json.loads(state_file.read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--skip", type=int, default=0, help="start after the first N claims (a batch cut short goes on)")
    parser.add_argument("--protocol", default="", help="default: the app's default protocol")
    parser.add_argument("--corpus", choices=("check-covid", "demo"), default="check-covid")
    parser.add_argument("--cache-ram", type=int, default=None, help="llama-server's prompt cache in MiB (restarts the server)")
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--backend", default="embedded", help="fake: the script's own smoke test, no model")
    parser.add_argument("--records", default="", help="append one JSON line per claim and one for the batch to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from pipelines.core.config import AppSettings, RunConfig

    protocol = args.protocol or RunConfig().protocol
    if args.child:
        child(protocol, args.corpus, args.claims, args.backend, args.skip)
        return

    env = dict(os.environ)
    if args.cache_ram is not None and args.backend == "embedded":
        stop_recorded_server()  # a running server keeps its cache size: the next one starts with the one asked for
        env["DEBATEDESK_LLAMA_CACHE_RAM"] = str(args.cache_ram)
    cache_ram = int(env.get("DEBATEDESK_LLAMA_CACHE_RAM", AppSettings().llama_cache_ram))
    load = os.getloadavg()
    print(f"{protocol}, {args.claims} claims ({args.corpus}), prompt cache {cache_ram} MiB; load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    command = [
        sys.executable,
        __file__,
        "--child",
        "--protocol",
        protocol,
        "--corpus",
        args.corpus,
        "--claims",
        str(args.claims),
        "--backend",
        args.backend,
        "--skip",
        str(args.skip),
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env)
    peak = {"app": 0, "server": 0, "both": 0}
    server_now = [0]
    state_file = AppSettings().model_cache / "server.json"
    reports: list[dict[str, object]] = []
    assert proc.stdout is not None

    def read() -> None:  # a thread drains the child's output, so the sampling loop never blocks on it
        for line in proc.stdout or ():
            if not line.startswith("{"):
                continue
            report = json.loads(line)
            if report.get("phase") == "claim":
                report["server_rss_mib"] = round(server_now[0] / 1024)
                print(
                    f"  claim {report['index']}: {report['verdict']} in {report['seconds']} s; server {report['server_rss_mib']} MiB",
                    flush=True,
                )
            reports.append(report)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while proc.poll() is None:
        app = rss_kib(proc.pid) or 0
        pid = server_pid(state_file)
        server = (rss_kib(pid) or 0) if pid else 0
        server_now[0] = server
        peak = {"app": max(peak["app"], app), "server": max(peak["server"], server), "both": max(peak["both"], app + server)}
        time.sleep(args.interval)
    reader.join()
    loaded = next((r["rss_kib"] for r in reports if r.get("phase") == "loaded"), None)
    done = next((r for r in reports if r.get("phase") == "done"), {})
    seconds = [float(r["seconds"]) for r in reports if r.get("phase") == "claim"]  # type: ignore[arg-type]
    hwm = int(done.get("hwm_kib") or 0)  # type: ignore[call-overload]
    summary = {
        "protocol": protocol,
        "claims": len(seconds),
        "skipped": args.skip,
        "cache_ram_mib": cache_ram,
        "wall_s": round(time.perf_counter() - started),
        "median_s_per_claim": round(statistics.median(seconds), 1) if seconds else None,
        "mean_s_per_claim": round(statistics.fmean(seconds), 1) if seconds else None,
        "app_loaded_mib": round(loaded / 1024) if isinstance(loaded, int) else None,
        "app_peak_mib": round(max(peak["app"], hwm) / 1024),
        "server_peak_mib": round(peak["server"] / 1024),
        # sampled together; never below the app's own high-water mark, which can fall between samples
        "both_peak_mib": round(max(peak["both"], max(peak["app"], hwm)) / 1024),
        "load_start": [round(x, 1) for x in load],
        "load_end": [round(x, 1) for x in os.getloadavg()],
    }
    print(json.dumps(summary))
    if args.records:
        with Path(args.records).open("a", encoding="utf-8") as out:
            for report in reports:
                if report.get("phase") == "claim":
                    out.write(json.dumps({"cache_ram_mib": cache_ram, **report}) + "\n")
            out.write(json.dumps({"phase": "batch", **summary}) + "\n")
    if proc.returncode:
        sys.exit(f"the batch stopped early (exit {proc.returncode}): {len(seconds)} of {args.claims} claims")


if __name__ == "__main__":
    main()
