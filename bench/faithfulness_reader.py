"""Faithfulness written, read or judged sentence by sentence: the same toolmad answers scored by each reader, how far apart and how long each takes.

    .venv/bin/python bench/faithfulness_reader.py --store DATA/runs.sqlite --records FILE.jsonl [--limit 24] [--per-run 4]
        [--readers generated read sentences]
    .venv/bin/python bench/faithfulness_reader.py --records FILE.jsonl --analyse
    .venv/bin/python bench/faithfulness_reader.py --store DATA/runs.sqlite --records SENTENCES.jsonl --probe [--limit 24 --per-run 6]

Takes the debaters' answers of the completed toolmad runs in a store (at most ``--per-run``
a run, in the order they were argued), each with the evidence its debater argued from (the
items its debater retrieved that round, else the run's first exhibits, and every item it
cites), and scores each answer's faithfulness once with each of ``--readers`` on one model,
one reader after the other, no response cache, each reader going first in turn (the one that goes second finds the
answer's evidence in the server's prompt cache, so only the seconds of the reader that went first compare):

- ``generated``: the scorer writes the statements, then a verdict on each (two JSON calls);
- ``read``: the answer's sentences, one letter a statement (which item states it, or none);
- ``sentences``: the answer's sentences, a verdict on each (one JSON call).

One JSON line per answer keeps every reader's result (F, the statements and what each rests
on, the seconds, the tokens written). ``--analyse`` prints the mean F of each, and for each
reader after the first the mean absolute difference from the first, how often the two agree
on passing the threshold, and the seconds. The readers may take different statements
(written atomic ones against sentences), so there is no statement-by-statement agreement: F
and the pass are what a debate uses.

``--probe`` asks, of each sentence of the same answers, the read question in both orders
("none of them" last, as shipped, and first) and a plain yes/no ("does the evidence state
it?", both orders), keeping every probability: whether the reading follows the items or the
letters, and whether a yes/no tells the sentences apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from bench.protocols import read_records
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.domain import Evidence, Turn
from pipelines.core.events import Event, EvidenceRetrieved, ModelCallCompleted, RunStarted, TurnCompleted
from pipelines.prompts import load_prompt
from pipelines.record.store import RunStore
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.stages.faithfulness import (
    NONE_OF_THEM,
    READ_LETTERS,
    Faithfulness,
    FaithfulnessResult,
    answer_statements,
    read_options,
    without_citations,
)
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.retrieval import format_evidence

READERS = ("generated", "read", "sentences")
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


def stored_answers(store_file: str, per_run: int) -> Iterator[tuple[str, str, Turn, list[Evidence]]]:
    """Every completed toolmad run's answers in a store, newest run first: (run/turn key, claim, answer, its evidence)."""
    store = RunStore(f"sqlite:///{Path(store_file).resolve()}")
    for run in store.list_runs(limit=1000):
        if run.protocol == "toolmad" and run.status == "completed":
            for claim, turn, evidence in answers(store.events(run.id), per_run):
                yield f"{run.id}/{turn.id}", claim, turn, evidence


def scorer(backend: str, on_call: Callable[[ModelCallCompleted], None] | None = None) -> LLM:
    """The scorer both readers ask, with token probabilities, at temperature 0, uncached."""
    chat = build_chat_model(ModelSpec(backend=backend, logprobs=True), AppSettings())
    return LLM(chat, role="scorer", model_name="qwen", params={"temperature": 0.0}, on_call=on_call)


async def collect(args: argparse.Namespace) -> None:
    calls: list[ModelCallCompleted] = []
    llm = scorer(args.backend, calls.append)
    out = Path(args.records)
    done = {r["turn"] for r in read_records(out)}
    taken = len(done)
    for key, claim, turn, evidence in stored_answers(args.store, args.per_run):
        if taken >= args.limit:
            break
        if key not in done:
            # The reader that goes second finds the answer's evidence in the server's prompt cache: each goes first in turn.
            order = [*args.readers[taken % len(args.readers) :], *args.readers[: taken % len(args.readers)]]
            line: dict[str, Any] = {"turn": key, "evidence": len(evidence), "order": order}
            for reader in order:
                line[reader] = await score(llm, calls, reader, claim, turn, evidence)
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
            taken += 1
            print(
                f"  {key}: " + ", ".join(f"{r} F {line[r]['f']:.2f} in {line[r]['seconds']:.1f}s" for r in args.readers),
                file=sys.stderr,
                flush=True,
            )


YES_NO_SYSTEM = (
    "You check one statement against numbered evidence. Say whether the evidence states the statement or clearly implies it. "
    "A statement the evidence does not mention, or gets a detail of wrong (a number, a time, a group), is not stated. "
    "Answer with one letter."
)
YES, NO = "The evidence states or clearly implies it.", "The evidence does not state it."


def item_question(shown: str, statement: str, evidence: Sequence[Evidence], none_first: bool) -> tuple[list[BaseMessage], list[str]]:
    """The read question with "none of them" last (as shipped) or first; the options' texts in letter order."""
    items = [f"[{e.id}]" for e in evidence]
    texts = [NONE_OF_THEM, *items] if none_first else [*items, NONE_OF_THEM]
    options, _ = read_options(texts)
    return load_prompt("faithfulness_read").render(evidence=shown, statement=statement, options=options), texts


def yes_no_question(shown: str, statement: str, yes_first: bool) -> list[BaseMessage]:
    first, second = (YES, NO) if yes_first else (NO, YES)
    block = "\n".join([f"A. {first}", f"B. {second}", options_line(("A", "B"))])
    return [
        SystemMessage(content=YES_NO_SYSTEM),
        HumanMessage(content=f"Evidence:\n{shown}\n\nStatement: {statement}\n\nDoes the evidence state this statement?\n{block}"),
    ]


async def probe(args: argparse.Namespace) -> None:
    """Every sentence of the answers, read each way, every probability kept."""
    llm = scorer(args.backend)
    out = Path(args.records)
    done = {(r["turn"], r["sentence"]) for r in read_records(out)}
    taken: set[str] = set()
    for key, _claim, turn, evidence in stored_answers(args.store, args.per_run):
        if len(taken) >= args.limit and key not in taken:
            continue
        taken.add(key)
        items = evidence[: len(READ_LETTERS) - 1]
        shown = format_evidence(items, max_chars=700)
        for sentence in answer_statements(turn.text, 8):
            if (key, sentence) in done:
                continue
            statement = without_citations(sentence)
            line: dict[str, Any] = {"turn": key, "sentence": sentence, "evidence_ids": [e.id for e in items]}
            for name, first in (("none_last", False), ("none_first", True)):
                messages, texts = item_question(shown, statement, items, first)
                read = await estimate_label_probabilities(llm, messages, READ_LETTERS[: len(texts)], max_tokens=1)
                line[name] = {text: read.probabilities[letter] for letter, text in zip(READ_LETTERS, texts, strict=False)}
            yes = []
            for yes_first in (True, False):
                read = await estimate_label_probabilities(llm, yes_no_question(shown, statement, yes_first), ("A", "B"), max_tokens=1)
                yes.append(read.probabilities["A" if yes_first else "B"])
            line["yes_both_orders"] = yes
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")


def analyse_probe(rows: Sequence[dict[str, Any]]) -> str:
    """Whether the read question follows the items or the letters, and how the yes/no spreads."""
    if not rows:
        return "no records"

    def likeliest(reading: dict[str, float]) -> str:
        return max(reading, key=lambda k: reading[k])

    same = sum(likeliest(r["none_last"]) == likeliest(r["none_first"]) for r in rows)
    second = [sum(list(r[order]).index(likeliest(r[order])) == 1 for r in rows) for order in ("none_last", "none_first")]
    none = [sum(likeliest(r[order]) == NONE_OF_THEM for r in rows) for order in ("none_last", "none_first")]
    yes = [statistics.mean(r["yes_both_orders"]) for r in rows]
    first, then = [r["yes_both_orders"][0] for r in rows], [r["yes_both_orders"][1] for r in rows]
    orders = f"{statistics.correlation(first, then):.2f}" if len(set(first)) > 1 and len(set(then)) > 1 else "n/a (one order never moved)"
    spread = [sum(lo <= p < lo + 0.1 for p in yes) for lo in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
    return "\n".join(
        [
            f"{len(rows)} sentences of {len({r['turn'] for r in rows})} answers",
            f"read question: the same answer in both orders for {same}; letter B the likeliest for {second[0]} (none last) "
            f"and {second[1]} (none first); 'none of them' the likeliest for {none[0]} and {none[1]}",
            f"yes/no: p(yes) averaged over both orders, by tenths from 0: {spread}; the two orders' correlation {orders}",
        ]
    )


def analyse(rows: Sequence[dict[str, Any]]) -> str:
    """F of each reader, how far each is from the first, whether they agree on passing, and what each costs."""
    readers = [r for r in READERS if rows and all(r in row for row in rows)]
    if not readers:
        return "no records"
    lines = [
        f"{len(rows)} answers",
        "",
        "| reader | mean F | passes F >= 0.7 | statements (mean) | calls (mean) | tokens written (mean) | seconds (median) | seconds (total) "
        "| seconds when it went first (median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in readers:
        scored = [row[name] for row in rows]
        # Records without an order (before 2026-12-04) ran the readers in --readers' order, so the later ones read a warm cache.
        went_first = [row[name]["seconds"] for row in rows if row.get("order", [None])[0] == name]
        lines.append(
            f"| `{name}` | {statistics.mean(s['f'] for s in scored):.3f} | {sum(s['f'] >= THRESHOLD for s in scored)} | "
            f"{statistics.mean(len(s['statements']) for s in scored):.1f} | {statistics.mean(s['calls'] for s in scored):.1f} | "
            f"{statistics.mean(s['tokens_out'] for s in scored):.0f} | {statistics.median(s['seconds'] for s in scored):.1f} | "
            f"{sum(s['seconds'] for s in scored):.0f} | {f'{statistics.median(went_first):.1f} ({len(went_first)})' if went_first else 'n/a'} |"
        )
    first = readers[0]
    lines.append("")
    for name in readers[1:]:
        pairs = [(row[first]["f"], row[name]["f"]) for row in rows]
        diff = statistics.mean(abs(a - b) for a, b in pairs)
        agree = sum((a >= THRESHOLD) == (b >= THRESHOLD) for a, b in pairs)
        lines.append(f"mean |F {first} - F {name}|: {diff:.3f}; the two agree on passing 0.7 for {agree} of {len(rows)} answers")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", required=True, help="JSON lines, one per answer; appended to, and read to resume")
    parser.add_argument("--store", default="", help="the runs store (sqlite file) whose toolmad answers are scored")
    parser.add_argument("--limit", type=int, default=24, help="answers in all")
    parser.add_argument("--per-run", type=int, default=4, help="answers a run, in the order they were argued")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument(
        "--readers",
        nargs="+",
        choices=READERS,
        default=["generated", "read"],
        help="the readers, in order; the first is the one the others are compared with",
    )
    parser.add_argument("--analyse", action="store_true", help="print the comparison of the records, run nothing")
    parser.add_argument("--probe", action="store_true", help="read each sentence every way (records: one line a sentence)")
    args = parser.parse_args()
    if not args.analyse:
        asyncio.run(probe(args) if args.probe else collect(args))
    rows = read_records(Path(args.records))
    print(analyse_probe(rows) if args.probe else analyse(rows))


if __name__ == "__main__":
    main()
