"""How much a 3-round `toolmad` debate costs beyond its model calls, with a fake model of fixed latency.

    .venv/bin/python bench/toolmad_overhead.py [--latency 0.5] [--rounds 3] [--data-dir /tmp/debatedesk-bench]

Prints, from one run: the wall time; the sum of model-call times (what a strictly serial
run would wait for the model); the time during which at least one call was running; a
critical-path estimate (the longest chain of dependent calls x the mean call time: per
round a query or rewrite, the answer, then faithfulness' two calls while answer relevance's
one runs beside them; then the judge); and their ratios. Web search is off (the Search
debater falls back to the corpus), the run store is on, as in the app.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import RoundStarted, StageStarted, TurnCompleted
from pipelines.record.digest import digest
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services

CLAIM = "Masks reduce transmission of respiratory viruses"


def union_length(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake model sleeps per call")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "debatedesk-bench")
    args = parser.parse_args()

    services = Services.create(AppSettings(data_dir=args.data_dir))
    services.chat_override = FakeChatModel(latency_s=args.latency)
    services.response_cache = None  # every call must reach the (fake) model, even in a folder an earlier run filled
    services.ensure_corpus("demo")
    config = RunConfig(protocol="toolmad", corpus="demo").with_backend("fake")
    config = config.model_copy(
        update={
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            # Early stop off, so the debate runs every round and the judge rules: the most expensive path.
            "toolmad": config.toolmad.model_copy(update={"rounds": args.rounds, "early_stop": False}),
        }
    )

    list(
        stream_run(
            "Vaccines cause autism", config.model_copy(update={"toolmad": config.toolmad.model_copy(update={"rounds": 1})}), services
        )
    )
    started = time.perf_counter()  # measured after a one-round warm-up: models, index and store are loaded
    events = list(stream_run(CLAIM, config, services))
    wall = time.perf_counter() - started

    run = digest(events)
    calls = run.calls
    model_sum = run.cost.model_seconds
    busy = union_length([(c.at - c.seconds, c.at) for c in calls])
    mean_call = model_sum / len(calls)
    rounds = sum(isinstance(e, RoundStarted) for e in events)
    judged = any(isinstance(e, StageStarted) and e.stage == "judge" for e in events)
    chain = rounds * 4 + int(judged)  # query/rewrite -> answer -> statements -> verdicts, per round; then the judge
    critical = chain * mean_call
    verdict = run.verdict
    assert verdict is not None, run.outcome
    turns = sum(isinstance(e, TurnCompleted) for e in events)
    by_role: dict[str, int] = {}
    for c in calls:
        by_role[c.role] = by_role.get(c.role, 0) + 1

    print(f"toolmad, {rounds} rounds, fake model at {args.latency:.2f} s/call, web off, run store on")
    print(f"verdict: {verdict.label} by {verdict.decided_by}; {turns} turns")
    print(f"model calls:                {len(calls)} ({', '.join(f'{r} {n}' for r, n in sorted(by_role.items()))}), mean {mean_call:.3f} s")
    print(f"wall time:                  {wall:7.2f} s")
    print(f"sum of model-call times:    {model_sum:7.2f} s   (a serial run's model wait)")
    print(f"time with a call running:   {busy:7.2f} s")
    print(f"critical path estimate:     {critical:7.2f} s   ({chain} dependent calls x {mean_call:.3f} s)")
    print(f"wall / sum of calls:        {wall / model_sum:7.2f}     (< 1: calls overlap; the parallel speed-up is {model_sum / wall:.2f}x)")
    print(f"wall / critical path:       {wall / critical:7.2f}     (1.00 would be no overhead beyond the dependent calls)")
    print(f"overhead beyond the chain:  {wall - critical:7.2f} s   (retrieval, embeddings, event store, streaming)")


if __name__ == "__main__":
    main()
