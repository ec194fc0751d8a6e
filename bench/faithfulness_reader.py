"""Faithfulness written or read: the same toolmad answers scored both ways, how far apart and how long each takes.

    .venv/bin/python bench/faithfulness_reader.py --store DATA/runs.sqlite --records FILE.jsonl [--limit 24] [--per-run 4]
    .venv/bin/python bench/faithfulness_reader.py --records FILE.jsonl --analyse

Takes the debaters' answers of the completed toolmad runs in a store (at most ``--per-run``
a run, in the order they were argued), each with the evidence its debater argued from (the
items its debater retrieved that round, else the run's first exhibits, and every item it
cites), and scores each answer's faithfulness twice on one model, one reader after the
other, no response cache:

- ``generated``: the scorer writes the statements, then a verdict on each (two JSON calls);
- ``read``: the answer's sentences, one letter a statement (which item states it, or none).

One JSON line per answer keeps both results (F, the statements and what each rests on, the
seconds, the tokens written). ``--analyse`` prints the mean F of each, the mean absolute
difference, how often the two agree on passing the threshold, and the seconds. The readers
take different statements (written atomic ones against sentences), so there is no
statement-by-statement agreement: F and the pass are what a debate uses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.protocols import read_records
from pipelines.config import AppSettings, ModelSpec
from pipelines.domain import Evidence, Turn
from pipelines.events import Event, EvidenceRetrieved, ModelCallCompleted, RunStarted, TurnCompleted
from pipelines.llm.client import LLM
from pipelines.llm.registry import build_chat_model
from pipelines.record.store import RunStore
from pipelines.stages.faithfulness import Faithfulness, FaithfulnessResult

READERS = ("generated", "read")
THRESHOLD = 0.7  # toolmad's faithfulness threshold (toolmad.faithfulness_threshold)
DEBATERS = ("RAG", "Search")
FIRST_EXHIBITS = 3  # a grounded RAG debater's round 1 argues from desk's first exhibits (toolmad.rag_top_k)


def answers(events: Sequence[Event], per_run: int) -> list[tuple[str, Turn, list[Evidence]]]:
    """The run's debater answers with the evidence each argued from, at most ``per_run``."""
    started = next(e for e in events if isinstance(e, RunStarted))
    retrieved = [e for e in events if isinstance(e, EvidenceRetrieved)]
    by_id = {e.evidence.id: e.evidence for e in retrieved}
    found: list[tuple[str, Turn, list[Evidence]]] = []
    for e in events:
        if not isinstance(e, TurnCompleted) or e.turn.agent not in DEBATERS:
            continue
        turn = e.turn
        own = [r.evidence for r in retrieved if r.agent == turn.agent and r.round == turn.round]
        if not own:
            own = [r.evidence for r in retrieved if r.agent not in DEBATERS][:FIRST_EXHIBITS]
        cited = [by_id[i] for i in turn.cited if i in by_id]
        evidence = list({x.id: x for x in [*own, *cited]}.values())
        found.append((started.claim, turn, evidence))
    return found[:per_run]


async def score(llm: LLM, calls: list[ModelCallCompleted], reader: str, claim: str, turn: Turn, evidence: list[Evidence]) -> dict[str, Any]:
    """One reader's F of one answer, with its seconds and the tokens its calls wrote."""
    calls.clear()
    started = time.perf_counter()
    result: FaithfulnessResult = await Faithfulness(llm, reader=reader).score(claim, turn.text, evidence)  # type: ignore[arg-type]
    return {
        "f": result.value,
        "statements": [[s.text, s.evidence_id if s.supported else None] for s in result.statements],
        "seconds": round(time.perf_counter() - started, 2),
        "calls": len(calls),
        "tokens_out": sum(c.tokens_out for c in calls),
    }


async def collect(args: argparse.Namespace) -> None:
    store = RunStore(f"sqlite:///{Path(args.store).resolve()}")
    settings = AppSettings()
    calls: list[ModelCallCompleted] = []
    llm = LLM(
        build_chat_model(ModelSpec(backend=args.backend, logprobs=True), settings),
        role="scorer",
        model_name="qwen",
        params={"temperature": 0.0},
        on_call=calls.append,
    )
    out = Path(args.records)
    done = {r["turn"] for r in read_records(out)}
    taken = len(done)
    for run in store.list_runs(limit=1000):
        if taken >= args.limit:
            break
        if run.protocol != "toolmad" or run.status != "completed":
            continue
        for claim, turn, evidence in answers(store.events(run.id), args.per_run):
            key = f"{run.id}/{turn.id}"
            if key in done or taken >= args.limit:
                continue
            line: dict[str, Any] = {"turn": key, "evidence": len(evidence)}
            for reader in READERS:
                line[reader] = await score(llm, calls, reader, claim, turn, evidence)
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
            taken += 1
            print(
                f"  {key}: " + ", ".join(f"{r} F {line[r]['f']:.2f} in {line[r]['seconds']:.1f}s" for r in READERS),
                file=sys.stderr,
                flush=True,
            )


def analyse(rows: Sequence[dict[str, Any]]) -> str:
    """F of each reader, how far apart, whether they agree on passing, and what each costs."""
    if not rows:
        return "no records"
    gen = [r["generated"] for r in rows]
    read = [r["read"] for r in rows]
    agree = sum((g["f"] >= THRESHOLD) == (x["f"] >= THRESHOLD) for g, x in zip(gen, read, strict=True))
    lines = [
        f"{len(rows)} answers",
        "",
        "| reader | mean F | passes F >= 0.7 | statements (mean) | calls (mean) | tokens written (mean) | seconds (median) | seconds (total) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, scored in (("generated", gen), ("read", read)):
        lines.append(
            f"| `{name}` | {statistics.mean(s['f'] for s in scored):.3f} | {sum(s['f'] >= THRESHOLD for s in scored)} | "
            f"{statistics.mean(len(s['statements']) for s in scored):.1f} | {statistics.mean(s['calls'] for s in scored):.1f} | "
            f"{statistics.mean(s['tokens_out'] for s in scored):.0f} | {statistics.median(s['seconds'] for s in scored):.1f} | "
            f"{sum(s['seconds'] for s in scored):.0f} |"
        )
    diff = statistics.mean(abs(g["f"] - x["f"]) for g, x in zip(gen, read, strict=True))
    lines += ["", f"mean |F generated - F read|: {diff:.3f}; the two agree on passing 0.7 for {agree} of {len(rows)} answers"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", required=True, help="JSON lines, one per answer; appended to, and read to resume")
    parser.add_argument("--store", default="", help="the runs store (sqlite file) whose toolmad answers are scored")
    parser.add_argument("--limit", type=int, default=24, help="answers in all")
    parser.add_argument("--per-run", type=int, default=4, help="answers a run, in the order they were argued")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--analyse", action="store_true", help="print the comparison of the records, run nothing")
    args = parser.parse_args()
    if not args.analyse:
        asyncio.run(collect(args))
    print(analyse(read_records(Path(args.records))))


if __name__ == "__main__":
    main()
