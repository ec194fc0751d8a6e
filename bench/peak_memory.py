"""Peak memory of the app process during a debate on the embedded backend.

    .venv/bin/python bench/peak_memory.py [--protocol single] [--claim "..."] [--interval 0.2]

Runs the debate the way the app does (Services + stream_run, run store on, web search off,
response cache off so every call reaches the model) in a child process, and samples from
/proc every --interval seconds: the child's resident memory (VmRSS, and its own high-water
mark VmHWM at the end) and the llama.cpp server's (a separate process the app starts once
and reuses). Also prints the child's memory once its models are loaded, before the debate,
so the debate's own share is visible.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from pipelines.config import RunConfig


def rss_kib(pid: int, field: str = "VmRSS") -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def uncached_embedded_config(protocol: str) -> RunConfig:
    """A debate on the embedded backend over the demo corpus, web search off, response cache off: every call reaches the model."""
    from pipelines.config import RunConfig

    config = RunConfig(protocol=protocol, corpus="demo").with_backend("embedded")
    return config.model_copy(
        update={
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            **{r: config.role(r).model_copy(update={"cache": "off"}) for r in ("debater", "judge", "scorer")},
        }
    )


def child(protocol: str, claim: str) -> None:
    """The measured process: load what the app loads, report, run one debate, report the high-water mark."""
    from pipelines.config import AppSettings
    from pipelines.record.digest import digest
    from pipelines.run.runner import stream_run
    from pipelines.run.services import Services

    services = Services.create(AppSettings())
    services.ensure_corpus("demo")
    config = uncached_embedded_config(protocol)
    services.embedder.embed(["warm up"])
    print(json.dumps({"phase": "loaded", "rss_kib": rss_kib(os.getpid())}), flush=True)
    outcome = digest(stream_run(claim, config, services)).outcome
    print(json.dumps({"phase": "done", "verdict": outcome, "hwm_kib": rss_kib(os.getpid(), "VmHWM")}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--protocol", default="single")
    parser.add_argument("--claim", default="Masks reduce transmission of respiratory viruses")
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.protocol, args.claim)
        return

    from pipelines.config import AppSettings

    command = [sys.executable, __file__, "--child", "--protocol", args.protocol, "--claim", args.claim]
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    peak_app = peak_server = 0
    server_state = AppSettings().model_cache / "server.json"
    lines: list[str] = []
    assert proc.stdout is not None
    # A thread drains the child's output: a non-blocking read of a text pipe raises
    # TypeError in CPython when no data is waiting (and the child then dies of a broken pipe).
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    while proc.poll() is None:
        peak_app = max(peak_app, rss_kib(proc.pid) or 0)
        try:
            server_pid = int(json.loads(server_state.read_text())["pid"])
            peak_server = max(peak_server, rss_kib(server_pid) or 0)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(args.interval)
    reader.join()
    reports = [json.loads(line) for line in lines if line.startswith("{")]
    loaded = next((r["rss_kib"] for r in reports if r.get("phase") == "loaded"), None)
    done = next((r for r in reports if r.get("phase") == "done"), {})
    print(f"{args.protocol} on the embedded backend: {done.get('verdict', 'did not finish')} in {time.perf_counter() - started:.0f} s")
    if loaded:
        print(f"app process after loading (MiniLM, Chroma, store): {loaded / 1024:.0f} MiB")
    print(
        f"app process peak during the debate: {max(peak_app, done.get('hwm_kib') or 0) / 1024:.0f} MiB (VmHWM {(done.get('hwm_kib') or 0) / 1024:.0f} MiB)"
    )
    print(f"llama.cpp server peak while sampled: {peak_server / 1024:.0f} MiB (a separate process, shared by every run)")


if __name__ == "__main__":
    main()
