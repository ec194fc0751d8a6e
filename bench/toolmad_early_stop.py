"""Where toolmad's debates would have stopped at other thresholds, and what that would have saved, from stored runs.

    .venv/bin/python bench/toolmad_early_stop.py --data-dir DIR --records FILE.jsonl [--relevance 0.8,0.7,0.6,0.5,0]
        [--faithfulness 0.7]

Tool-MAD stops early when, in one round, both debaters give the same label and both answers
pass faithfulness (F) and answer relevance (AR); otherwise the judge rules after the last
round. Each stored toolmad run keeps every answer's label and both scores (``TurnCompleted``,
``ScoreComputed``), so the rule can be replayed at other thresholds without a model call.

For each pair of thresholds, on the newest toolmad record of each claim in ``--records``
(``bench/protocols.py``'s records) whose run is stored in ``--data-dir``: how many runs would
have stopped after round 1, 2, ... or gone on to the judge, how many of the agreed labels were
the gold label, and the median seconds a claim, counting a run that would have stopped at round
k as the seconds from its start until round k's last score (a lower bound: the ruling after a
stop, as the calibrated reading, is left out) and any other run as it took; and the tokens the
model read in the debate itself (from round 1's start: desk's reading before it is the same
either way), counted the same way, with the median share of each run's own debate they would
have been. Replaying is exact only up to the stop: at temperature 0 a run with the other
threshold asks the same questions in the same order until then.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.protocols import newest_records, read_records
from pipelines.core.config import AppSettings
from pipelines.core.events import Event, ModelCallCompleted, RoundStarted, ScoreComputed, TurnCompleted, VerdictReached
from pipelines.record.digest import Cost
from pipelines.record.store import RunStore


@dataclass(frozen=True)
class Round:
    """One round of a stored toolmad run: whether its two answers agreed, their lowest F and AR, when its last score came."""

    number: int
    label: str | None  # the label both debaters gave, None when they differed or one gave none
    f: float  # the lower of the two answers' F (0 when one was not scored)
    ar: float
    scored_at: float  # seconds from the run's start to this round's last score
    read: int = 0  # tokens the model read (sent less those its server reused, and written) from round 1's start to this round's last score


@dataclass(frozen=True)
class StoredRun:
    claim_id: str
    gold: str
    rounds: tuple[Round, ...]
    seconds: float  # from the run's start to its verdict
    read: int = 0  # tokens the model read from round 1's start to the verdict: the debate's, desk's reading before it left out


def read_after(events: Sequence[Event], since: float, until: float) -> int:
    """Tokens the model read in the calls completed after ``since`` until ``until`` (times of events)."""
    calls = (e for e in events if isinstance(e, ModelCallCompleted) and since < e.at <= until)
    return Cost.total(Cost().add_call(e) for e in calls).tokens_read


def debate_start(events: Sequence[Event]) -> float:
    """When round 1 started: desk's reading, which every debate pays first, is before it."""
    return next((e.at for e in events if isinstance(e, RoundStarted) and e.round == 1), events[0].at if events else 0.0)


def rounds_of(events: Sequence[Event]) -> tuple[Round, ...]:
    """Each argued round's agreement and scores, in order (the targets are the turn ids, "RAG-r2")."""
    start = events[0].at if events else 0.0
    debate = debate_start(events)
    labels: dict[int, dict[str, str | None]] = {}
    scores: dict[int, dict[tuple[str, str], float]] = {}
    scored_at: dict[int, float] = {}
    turn_round: dict[str, int] = {}
    for e in events:
        if isinstance(e, TurnCompleted) and e.turn.round > 0:
            labels.setdefault(e.turn.round, {})[e.turn.agent] = e.turn.label
            turn_round[e.turn.id] = e.turn.round
        elif isinstance(e, ScoreComputed) and e.target in turn_round:
            k = turn_round[e.target]
            scores.setdefault(k, {})[(e.target, e.metric)] = e.value
            scored_at[k] = e.at - start
    out = []
    for k in sorted(labels):
        said = set(labels[k].values())
        agreed = next(iter(said)) if len(said) == 1 and len(labels[k]) == 2 else None
        ids = [t for t, r in turn_round.items() if r == k]
        f = min((scores.get(k, {}).get((t, "F"), 0.0) for t in ids), default=0.0)
        ar = min((scores.get(k, {}).get((t, "AR"), 0.0) for t in ids), default=0.0)
        at = scored_at.get(k, 0.0)
        out.append(Round(number=k, label=agreed, f=f, ar=ar, scored_at=at, read=read_after(events, debate, start + at)))
    return tuple(out)


def stored_runs(records: Sequence[dict[str, Any]], store: RunStore) -> list[StoredRun]:
    """The newest toolmad record of each claim (as the protocols bench's tables take it), where its run is in ``store`` and reached a verdict."""
    newest = newest_records(records, {r["id"] for r in records})
    runs = []
    for (protocol, claim_id), r in newest.items():
        if protocol != "toolmad" or not r.get("run_id"):
            continue
        events = store.events(r["run_id"])
        ends = [e.at for e in events if isinstance(e, VerdictReached)]
        if events and ends:
            read = read_after(events, debate_start(events), ends[-1])
            runs.append(StoredRun(claim_id, r["gold"], rounds_of(events), ends[-1] - events[0].at, read))
    return runs


def stop_round(run: StoredRun, faithfulness: float, relevance: float) -> Round | None:
    """The first round whose two answers agreed and both passed the thresholds; None: the judge would have ruled."""
    return next((r for r in run.rounds if r.label is not None and r.f >= faithfulness and r.ar >= relevance), None)


def table(runs: Sequence[StoredRun], faithfulness: Sequence[float], relevance: Sequence[float]) -> str:
    most = max((len(r.rounds) for r in runs), default=0)
    lines = [
        "| F at least | AR at least | " + " | ".join(f"stop after round {k}" for k in range(1, most + 1)) + " | to the judge "
        "| agreed label right | seconds (median) | debate tokens read (median) | of the whole debate's (median) |",
        "| ---: | ---: |" + " ---: |" * (most + 5),
    ]
    for f in faithfulness:
        for ar in relevance:
            stops = [stop_round(run, f, ar) for run in runs]
            counts = [sum(1 for s in stops if s is not None and s.number == k) for k in range(1, most + 1)]
            right = sum(1 for run, s in zip(runs, stops, strict=True) if s is not None and s.label == run.gold)
            stopped = sum(counts)
            seconds = [s.scored_at if s is not None else run.seconds for run, s in zip(runs, stops, strict=True)]
            median = f"{statistics.median(seconds):.0f}" if seconds else "-"
            read = [(s.read if s is not None else run.read, run.read) for run, s in zip(runs, stops, strict=True)]
            tokens = f"{statistics.median(r for r, _ in read):,.0f}" if read else "-"
            share = f"{statistics.median(r / whole for r, whole in read if whole):.2f}" if any(w for _, w in read) else "-"
            cells = " | ".join(str(c) for c in counts)
            lines.append(f"| {f:g} | {ar:g} | {cells} | {len(runs) - stopped} | {right} of {stopped} | {median} | {tokens} | {share} |")
    return "\n".join(lines)


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", required=True, help="the bench's data folder, whose runs.sqlite holds the runs")
    parser.add_argument("--records", required=True, help="bench/protocols.py's records (JSON lines)")
    parser.add_argument("--faithfulness", default="0.7", help="F thresholds to try, comma separated (shipped: 0.7)")
    parser.add_argument("--relevance", default="0.8,0.7,0.6,0.5,0", help="AR thresholds to try, comma separated (shipped: 0.5)")
    args = parser.parse_args()
    records = read_records(Path(args.records))
    runs = stored_runs(records, RunStore(AppSettings(data_dir=Path(args.data_dir)).sqlite_url))
    print(f"{len(runs)} stored toolmad runs with a verdict\n")
    print(table(runs, floats(args.faithfulness), floats(args.relevance)))


if __name__ == "__main__":
    main()
