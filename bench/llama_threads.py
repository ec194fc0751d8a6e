"""The embedded model's thread count, side by side: the same debate on a server with each count.

    .venv/bin/python bench/llama_threads.py [--threads 1 2] [--reps 2] [--protocol single] [--claim "..."]

For each repetition and each thread count, in turn (1, 2, 1, 2, ...): stop the app's
llama.cpp server, start it again with that many threads, warm it with one tiny call (the
model's load is not what is measured), then run one debate the way the app does (Services +
stream_run, web search off, response cache off so every call reaches the model) on the
demo corpus (the app's Services notice the restarted server and build their model again).
Prints each debate's wall time, the model's own time and tokens (from the
run's ModelCallCompleted events), then the medians and their ratio against the first count.

The app process doing its own work between calls (embeddings, BM25, the store) is part of
what is measured: that is what a checker's one machine runs. Stop anything else first; the
figures say nothing about a busy machine. The server is left stopped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai import OpenAI

from bench.peak_memory import uncached_config
from pipelines.core.config import AppSettings
from pipelines.record.digest import digest
from pipelines.run.llm.embedded import assemble_model, default_threads, ensure_server, stop_server
from pipelines.run.runner import stream_run
from pipelines.run.services import Services


def one_debate(services: Services, protocol: str, claim: str) -> dict[str, object]:
    config = uncached_config(protocol, "demo")
    started = time.perf_counter()
    run = digest(stream_run(claim, config, services))
    cost = run.cost
    return {
        "wall_s": time.perf_counter() - started,
        "model_s": cost.model_seconds,
        "calls": cost.calls,
        "tokens_out": cost.tokens_out,
        "verdict": run.outcome,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--protocol", default="single")
    parser.add_argument("--claim", default="Masks reduce transmission of respiratory viruses")
    args = parser.parse_args()

    settings = AppSettings()
    model = assemble_model(settings.model_cache)
    services = Services.create(settings)
    services.ensure_corpus("demo")
    services.embedder.embed(["warm up"])
    print(f"default here: {default_threads()} thread(s); comparing {args.threads}, {args.reps} debate(s) each, `{args.protocol}`")
    results: dict[int, list[dict[str, object]]] = {n: [] for n in args.threads}
    try:
        for rep in range(args.reps):
            for n in args.threads:
                stop_server(settings.model_cache)
                base_url = ensure_server(model, settings.model_cache, n_threads=n)
                OpenAI(base_url=base_url, api_key="none").chat.completions.create(
                    model="local", messages=[{"role": "user", "content": "Say OK."}], max_tokens=2, temperature=0
                )
                r = one_debate(services, args.protocol, args.claim)
                if str(r["verdict"]).startswith("failed"):
                    raise SystemExit(f"the debate on {n} thread(s) failed, so nothing is compared: {r['verdict']}")
                results[n].append(r)
                rate = float(r["tokens_out"]) / float(r["model_s"]) if r["model_s"] else 0.0  # type: ignore[arg-type]
                print(
                    f"  rep {rep + 1}, {n} thread(s): {r['wall_s']:.1f} s wall, {r['model_s']:.1f} s in {r['calls']} model calls, "
                    f"{r['tokens_out']} tokens out ({rate:.1f}/s over the calls' time), verdict {r['verdict']}",
                    flush=True,
                )
    finally:
        stop_server(settings.model_cache)

    base = statistics.median(float(r["wall_s"]) for r in results[args.threads[0]])  # type: ignore[arg-type]
    print(f"\n| threads | median wall (s) | median model time (s) | wall vs {args.threads[0]} thread(s) |")
    print("| ---: | ---: | ---: | ---: |")
    for n, runs in results.items():
        wall = statistics.median(float(r["wall_s"]) for r in runs)  # type: ignore[arg-type]
        model_s = statistics.median(float(r["model_s"]) for r in runs)  # type: ignore[arg-type]
        print(f"| {n} | {wall:.1f} | {model_s:.1f} | {base / wall:.2f}x faster |")


if __name__ == "__main__":
    main()
