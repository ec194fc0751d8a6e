"""Two runs of one debate protocol on the same claims side by side, from their stores: what the debate cost, what it ruled.

    .venv/bin/python bench/debate_paired.py FIRST_DIR FIRST.jsonl SECOND_DIR SECOND.jsonl [--protocol toolmad]
        [--names generated,sentences]

Each pair of a data folder and its records is one ``bench/protocols.py --data-dir DIR --records FILE`` run (the same
claims, two settings, say ``--set toolmad.faithfulness_reader=sentences``). For each claim both ran, from each run's
own events: the tokens the model read in the debate itself, from the protocol's own start to the verdict (desk's reading before
it is paid either way, and served from the response cache where a run reads it again), of them the prompt tokens it
computed (those its server's prompt cache did not serve), and how many of them its
debaters, scorer and judge read, its calls, the model seconds of its scorer, how it ended (which round, consensus or judge), the protocol's own ruling (the ruling
kept beside the verdict where the calibrated reading is the verdict) and the verdict with its confidence. Then the
second run's debate tokens as a share of the first's (median of the claims' ratios), and how many claims kept the same
ruling and the same verdict.

Model seconds are the calls' own seconds summed (calls in flight together each count theirs); they compare between the
two runs only when the machine was as quiet for both, so tokens and calls are the figures to trust.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.protocols import newest_records, read_records
from bench.toolmad_early_stop import debate_start
from pipelines.core.config import AppSettings
from pipelines.core.domain import Turn
from pipelines.core.events import Event, ModelCallCompleted, RoundStarted, StageCompleted, StageStarted, TurnCompleted, VerdictReached
from pipelines.record.digest import Cost
from pipelines.record.store import RunStore
from pipelines.run.grounding import CALIBRATED

ROLES = ("debater", "scorer", "judge")
RUN = 8  # words: a turn repeats an earlier one when half or more of its runs of this many words were said before


def shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def repeats(turn: Turn, earlier: Sequence[Turn]) -> bool:
    """Half or more of the turn's runs of ``RUN`` words were in an earlier round's turns (its own side's or the other's).

    A weak model's debaters write the same paragraph again, their own or the opponent's (or the evidence copied out
    the same way each time): a debate that says it again shows a class nothing new.
    """
    own = shingles(turn.text)
    said = set().union(*(shingles(t.text) for t in earlier if t.round < turn.round))
    return bool(own) and len(own & said) * 2 >= len(own)


@dataclass(frozen=True)
class Debate:
    """One stored run's debate: its cost from the protocol's own start (``protocol_start``), how it ended and what it ruled."""

    claim_id: str
    read: int  # tokens the model read from the protocol's own start to the verdict
    computed: int  # of them, the prompt tokens the server computed (sent, less those served from its prompt cache)
    calls: int
    seconds: dict[str, float]  # model seconds by role, from the same start
    read_by: dict[str, int]  # tokens read by role, from the same start
    rounds: int
    decided_by: str  # the protocol's own ruling's: consensus, judge, panel, ...
    ruling: str  # the protocol's own label
    verdict: str
    confidence: float | None
    later_turns: int = 0  # debaters' turns after round 1 (a debater: an agent who spoke in round 1)
    repeating: int = 0  # of them, those that mostly say again what an earlier turn said (``repeats``)


def protocol_start(events: Sequence[Event]) -> float:
    """When the protocol's own work began: once desk's reading (grounding) and the belief read from it were done.

    A grounded debate first pays desk's reading, the same whatever the protocol does next; what follows is the
    protocol's (proclaim's premises and its admissibility ruling on every exhibit come before its round 1). A run
    that was not grounded: round 1's start.
    """
    done = next((i for i, e in enumerate(events) if isinstance(e, StageCompleted) and e.stage == "grounding"), None)
    if done is None:
        return debate_start(events)
    at = events[done].at
    for e in events[done + 1 :]:
        if isinstance(e, StageStarted) and e.stage != "belief":
            break
        if isinstance(e, StageCompleted) and e.stage == "belief":
            at = e.at
    return at


def debate_of(claim_id: str, events: Sequence[Event]) -> Debate | None:
    """The debate of a stored run, or None when it reached no verdict."""
    verdicts = [e for e in events if isinstance(e, VerdictReached)]
    if not verdicts:
        return None
    start, end = protocol_start(events), verdicts[-1].at
    calls = [e for e in events if isinstance(e, ModelCallCompleted) and start < e.at <= end and not e.cached]
    by_role = {role: Cost.total(Cost().add_call(c) for c in calls if c.role == role) for role in ROLES}
    whole = Cost.total(Cost().add_call(c) for c in calls)
    verdict = verdicts[-1].verdict
    own = verdict.beside if verdict.beside is not None and verdict.decided_by == CALIBRATED else verdict
    spoken = [e.turn for e in events if isinstance(e, TurnCompleted) and start < e.at <= end]
    debaters = {t.agent for t in spoken if t.round == 1}  # a judge's written ruling comes in the last round only
    turns = [t for t in spoken if t.agent in debaters]
    later = [t for t in turns if t.round > 1]
    return Debate(
        claim_id=claim_id,
        read=whole.tokens_read,
        computed=whole.prompt_computed,
        calls=whole.calls,
        seconds={role: cost.model_seconds for role, cost in by_role.items()},
        read_by={role: cost.tokens_read for role, cost in by_role.items()},
        rounds=max((e.round for e in events if isinstance(e, RoundStarted)), default=0),
        decided_by=own.decided_by,
        ruling=own.label,
        verdict=verdict.label,
        confidence=verdict.confidence,
        later_turns=len(later),
        repeating=sum(repeats(t, turns) for t in later),
    )


def debates(data_dir: Path, records_path: Path, protocol: str) -> dict[str, Debate]:
    """Each claim's newest run of ``protocol`` in the records whose events are in the data folder's store."""
    records = read_records(records_path)
    store = RunStore(AppSettings(data_dir=data_dir).sqlite_url)
    out = {}
    for (p, claim_id), r in newest_records(records, {r["id"] for r in records}).items():
        if p == protocol and r.get("run_id") and (d := debate_of(claim_id, store.events(r["run_id"]))) is not None:
            out[claim_id] = d
    return out


def same_verdict(a: Debate, b: Debate) -> bool:
    """The same label, and confidences within 0.005 (the server's token probabilities vary in the fourth place)."""
    if a.verdict != b.verdict:
        return False
    return a.confidence is None or b.confidence is None or abs(a.confidence - b.confidence) <= 0.005


def _confidence(d: Debate) -> str:
    return "n/a" if d.confidence is None else f"{d.confidence:.3f}"


def table(first: dict[str, Debate], second: dict[str, Debate], names: Sequence[str]) -> str:
    a, b = names
    both = [c for c in first if c in second]
    lines = [
        f"| claim | debate tokens read, {a} / {b} | of them debaters' | scorer's | judge's | calls | scorer model s "
        f"| rounds, how it ended | own ruling | verdict |",
        "| --- |" + " ---: |" * 6 + " --- | --- | --- |",
    ]
    for c in both:
        x, y = first[c], second[c]
        ended = f"{x.rounds} {x.decided_by} / {y.rounds} {y.decided_by}"
        ruling = x.ruling if x.ruling == y.ruling else f"{x.ruling} / {y.ruling}"
        verdict = f"{x.verdict} {_confidence(x)} / {y.verdict} {_confidence(y)}"
        lines.append(
            f"| …{c[-8:]} | {x.read:,} / {y.read:,} | "
            + " | ".join(f"{x.read_by[role]:,} / {y.read_by[role]:,}" for role in ROLES)
            + f" | {x.calls} / {y.calls} | {x.seconds['scorer']:.0f} / {y.seconds['scorer']:.0f} | {ended} | {ruling} | {verdict} |"
        )
    if not both:
        return "no claim is in both runs"
    shares = [second[c].read / first[c].read for c in both if first[c].read]
    computed = [second[c].computed / first[c].computed for c in both if first[c].computed]
    scorer = [second[c].seconds["scorer"] / first[c].seconds["scorer"] for c in both if first[c].seconds["scorer"]]
    lines += [
        "",
        f"{len(both)} claims in both runs. {b}'s debate tokens read as a share of {a}'s: "
        + (f"{statistics.median(shares):.2f} (median of the claims' ratios; {min(shares):.2f} to {max(shares):.2f})" if shares else "n/a")
        + (
            f"; its prompt tokens computed (the server's cache left out): {statistics.median(computed):.2f} "
            f"({min(computed):.2f} to {max(computed):.2f}; {_median(first, both)} and {_median(second, both)} a claim)"
            if computed
            else ""
        )
        + (f"; its scorer's model seconds: {statistics.median(scorer):.2f}" if scorer else "")
        + f". Debaters' turns after round 1 that mostly said again what an earlier round said: "
        f"{sum(first[c].repeating for c in both)} of {sum(first[c].later_turns for c in both)} in {a}, "
        f"{sum(second[c].repeating for c in both)} of {sum(second[c].later_turns for c in both)} in {b}"
        + f". The same own ruling: {sum(first[c].ruling == second[c].ruling for c in both)} of {len(both)};"
        f" the same verdict: {sum(same_verdict(first[c], second[c]) for c in both)} of {len(both)}.",
    ]
    return "\n".join(lines)


def _median(runs: dict[str, Debate], claims: Sequence[str]) -> str:
    return f"{statistics.median(runs[c].computed for c in claims):,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first_dir", help="the first run's data folder (its runs.sqlite holds the runs)")
    parser.add_argument("first_records", help="the first run's records (bench/protocols.py --records)")
    parser.add_argument("second_dir")
    parser.add_argument("second_records")
    parser.add_argument("--protocol", default="toolmad")
    parser.add_argument("--names", default="first,second", help="the two runs' names in the table, comma separated")
    args = parser.parse_args()
    names = [n.strip() for n in args.names.split(",")]
    if len(names) != 2:
        parser.error("--names takes two names, comma separated")
    first = debates(Path(args.first_dir), Path(args.first_records), args.protocol)
    second = debates(Path(args.second_dir), Path(args.second_records), args.protocol)
    print(table(first, second, names))


if __name__ == "__main__":
    main()
