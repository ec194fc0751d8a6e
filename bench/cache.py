"""The response cache: a 20-claim evaluation run cold, then repeated warm, in one process.

    .venv/bin/python bench/cache.py [--latency 1.0] [--claims 20] [--protocol single] [--concurrency 1] [--warm-runs 1] [--data-dir DIR]

The model is the fake with a fixed latency per call, standing in for a real one (the
embedded model takes 10 s to several minutes per call on this machine, so the real ratio
is far larger). The response cache starts empty (a fresh folder), the Check-COVID dev
sample is the same both times (seed 0), the run store is on, web search off: the warm run
is exactly what repeating an evaluation costs. Goal: warm at least 20x faster (the ratio is
cold over the first warm run; ``--warm-runs N`` repeats the warm evaluation N times and prints
each, since one warm run lasts about a second and a busy machine moves it by tens of percent).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings, RunConfig
from pipelines.eval.datasets import load_dataset
from pipelines.eval.harness import evaluate, evaluation_config
from pipelines.run.llm.cache import DiskResponseCache
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.services import Services

GOAL = 20.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake model takes per call")
    parser.add_argument("--claims", type=int, default=20)
    parser.add_argument("--protocol", default="single")
    parser.add_argument("--concurrency", type=int, default=1, help="claims at once")
    parser.add_argument("--warm-runs", type=int, default=1, help="how many times the warm evaluation is repeated")
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "debatedesk-bench")
    args = parser.parse_args()

    settings = AppSettings(data_dir=args.data_dir)
    services = Services.create(settings)
    services.chat_override = FakeChatModel(latency_s=args.latency)
    with tempfile.TemporaryDirectory() as fresh:
        services.response_cache = DiskResponseCache(Path(fresh))
        config = evaluation_config(RunConfig(), protocol=args.protocol, backend="fake", corpus="check-covid")
        dataset = load_dataset("check-covid", "dev", checkcovid_dir=settings.checkcovid_dir)
        services.ensure_corpus("check-covid")  # indexed once, outside both timings
        timings = []
        for name in ["cold", "warm"] + [f"warm {i}" for i in range(2, args.warm_runs + 1)]:
            started = time.perf_counter()
            report = evaluate(dataset, config, services, limit=args.claims, seed=0, concurrency=args.concurrency)
            seconds = time.perf_counter() - started
            timings.append(seconds)
            print(
                f"{name}: {report.claims} claims in {seconds:.2f} s ({seconds / report.claims:.3f} s a claim); "
                f"{report.cost.calls} model calls, {report.cost.cached_calls} from the cache; accuracy {report.accuracy:.3f}"
            )
        ratio = timings[0] / timings[1]
        print(
            f"warm is {ratio:.1f}x faster than cold ({args.protocol}, fake latency {args.latency:.2f} s a call, "
            f"concurrency {args.concurrency}); goal >= {GOAL:.0f}x: {'met' if ratio >= GOAL else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
