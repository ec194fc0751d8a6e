"""Corpus query latency with short embeddings on one torch thread or on torch's default threads, side by side.

    .venv/bin/python bench/query_latency.py [--split dev] [--limit N] [--mode hybrid] [--data-dir DIR]

Searches the check-covid corpus (built in ``--data-dir`` on first use, then reused) once per
Check-COVID claim in each condition, alternating claim by claim so both see the same load,
and prints p50 and p95 of one search (query embedding included) per condition.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_quality import load_claims, percentile
from pipelines.config import AppSettings
from pipelines.runner import Services
from pipelines.tools import embeddings

CONDITIONS = {"default threads": 0, f"one thread up to {embeddings.SINGLE_THREAD_UP_TO} texts": embeddings.SINGLE_THREAD_UP_TO}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "lexical"])
    parser.add_argument("--checkcovid-dir", type=Path, default=AppSettings().checkcovid_dir)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/debatedesk-bench"))
    args = parser.parse_args(argv)

    claims = load_claims(args.checkcovid_dir, args.split, args.limit)
    services = Services.create(AppSettings(data_dir=args.data_dir, checkcovid_dir=args.checkcovid_dir), with_store=False)
    services.ensure_corpus("check-covid")
    index = services.index
    index.search("check-covid", "warm-up query", 3, mode=args.mode)
    ms: dict[str, list[float]] = {name: [] for name in CONDITIONS}
    try:
        for claim in claims:
            for name, limit in CONDITIONS.items():
                embeddings.SINGLE_THREAD_UP_TO = limit
                started = time.perf_counter()
                index.search("check-covid", claim.text, 3, mode=args.mode)
                ms[name].append((time.perf_counter() - started) * 1000)
    finally:
        embeddings.SINGLE_THREAD_UP_TO = CONDITIONS[next(reversed(CONDITIONS))]
    print(f"| {args.mode} search, {len(claims)} {args.split} claims | p50 ms | p95 ms |\n|---|---|---|")
    for name, values in ms.items():
        values.sort()
        print(f"| {name} | {statistics.median(values):.0f} | {percentile(values, 95):.0f} |")


if __name__ == "__main__":
    main()
