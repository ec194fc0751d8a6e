"""Two stored runs side by side, whatever their claims' wording: verdicts, confidence, cost, and the exhibits both used or one alone.

Exhibits are matched by their text (``exhibits.same_text``: words, case and spacing aside), not by
id: two runs number their evidence each their own way. An exhibit a checker struck does not count
as used. Pure: built from the stored summaries and events; each sink escapes what it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.core.domain import Evidence
from pipelines.core.events import Event
from pipelines.record.digest import Cost, digest
from pipelines.record.store import RunSummary
from pipelines.record.verdict_card import CardLabel
from pipelines.stages.exhibits import same_text


@dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: its claim as worded, protocol, final verdict (the checker's when set), confidence, cost, and
    the exhibits it used (not struck), with whether its verdict cites each."""

    id: str
    claim: str
    protocol: str
    verdict: CardLabel | None
    confidence: float | None
    cost: Cost
    used: tuple[Evidence, ...]
    cited: frozenset[str]  # ids of the used exhibits the verdict rests on


@dataclass(frozen=True)
class RunComparison:
    left: ComparedRun
    right: ComparedRun
    both: tuple[tuple[Evidence, Evidence], ...]  # the same text, as each run holds it
    left_only: tuple[Evidence, ...]
    right_only: tuple[Evidence, ...]

    @property
    def same_wording(self) -> bool:
        return " ".join(self.left.claim.split()) == " ".join(self.right.claim.split())

    @property
    def same_verdict(self) -> bool:
        return self.left.verdict is not None and self.right.verdict is not None and self.left.verdict.common == self.right.verdict.common


def compare_runs(left: RunSummary, left_events: Sequence[Event], right: RunSummary, right_events: Sequence[Event]) -> RunComparison:
    one, other = _compared(left, left_events), _compared(right, right_events)
    theirs = {same_text(e.text): e for e in other.used}
    mine = {same_text(e.text) for e in one.used}
    both = tuple((e, theirs[same_text(e.text)]) for e in one.used if same_text(e.text) in theirs)
    return RunComparison(
        left=one,
        right=other,
        both=both,
        left_only=tuple(e for e in one.used if same_text(e.text) not in theirs),
        right_only=tuple(e for e in other.used if same_text(e.text) not in mine),
    )


def _compared(summary: RunSummary, events: Sequence[Event]) -> ComparedRun:
    run = digest(events)
    used = tuple(e for e in run.evidence.values() if e.id not in run.struck)
    label = summary.final_verdict
    confidence = summary.confidence if not summary.checker_verdict else None  # a checker's verdict carries no model confidence
    return ComparedRun(
        id=summary.id,
        claim=summary.claim,
        protocol=summary.protocol,
        verdict=CardLabel.of(label) if label else None,
        confidence=confidence,
        cost=run.cost,
        used=used,
        cited=frozenset(c.id for c in run.cited_evidence()),
    )


__all__ = ["ComparedRun", "RunComparison", "compare_runs"]
