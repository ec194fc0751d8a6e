"""Any two stored runs side by side, whatever their claims' wording: verdicts, confidence, shared and lone exhibits, arguments, cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.domain import Evidence, Turn
from pipelines.events import Event, TurnCompleted
from pipelines.record.digest import Cost, RunDigest, digest
from pipelines.record.verdict_card import common_label
from pipelines.stages.exhibits import same_text
from pipelines.stages.retrieval import evidence_key


@dataclass(frozen=True)
class RunSide:
    """One run as the comparison shows it."""

    run_id: str
    claim: str
    protocol: str
    label: str  # SUPPORTED / REFUTED / NOT ENOUGH INFO, the checker's when overridden
    own_label: str  # the protocol's (or the checker's) own word
    overridden: bool
    confidence: float | None
    cost: Cost
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class SharedExhibit:
    """An item both runs found (the same passage or page, or the same text under another id): its id in each."""

    left_id: str
    right_id: str
    title: str
    left_cited: bool
    right_cited: bool


@dataclass(frozen=True)
class RunComparison:
    left: RunSide
    right: RunSide
    shared: tuple[SharedExhibit, ...]
    left_only: tuple[Evidence, ...]
    right_only: tuple[Evidence, ...]
    left_cited: frozenset[str]
    right_cited: frozenset[str]

    @property
    def same_claim(self) -> bool:
        return " ".join(self.left.claim.split()).lower() == " ".join(self.right.claim.split()).lower()

    @property
    def agree(self) -> bool:
        return self.left.label == self.right.label


def compare_runs(left: Sequence[Event], right: Sequence[Event]) -> RunComparison:
    """Two runs' events read side by side; an exhibit counts as shared when both found the same item or the same text."""
    a, b = digest(left), digest(right)
    a_cited, b_cited = _cited(a), _cited(b)
    by_key = {evidence_key(e): e for e in b.evidence.values()}
    by_text = {same_text(e.text): e for e in b.evidence.values()}
    shared: list[SharedExhibit] = []
    matched: set[str] = set()
    left_only: list[Evidence] = []
    for item in a.evidence.values():
        twin = by_key.get(evidence_key(item)) or by_text.get(same_text(item.text))
        if twin is None or twin.id in matched:
            left_only.append(item)
            continue
        matched.add(twin.id)
        title = item.title or item.source_label or twin.title or ""
        shared.append(SharedExhibit(item.id, twin.id, title, item.id in a_cited, twin.id in b_cited))
    right_only = [e for e in b.evidence.values() if e.id not in matched]
    return RunComparison(
        left=_side(a, left),
        right=_side(b, right),
        shared=tuple(shared),
        left_only=tuple(left_only),
        right_only=tuple(right_only),
        left_cited=frozenset(a_cited),
        right_cited=frozenset(b_cited),
    )


def _cited(run: RunDigest) -> set[str]:
    """What a run rested on: the verdict's citations and every item an argument cited."""
    cited = set(run.cited_by)
    if run.verdict is not None:
        cited |= set(run.verdict.cited)
    return cited


def _side(run: RunDigest, events: Sequence[Event]) -> RunSide:
    verdict = run.verdict
    own = run.override.label if run.override is not None else (verdict.label if verdict is not None else "")
    return RunSide(
        run_id=run.run_id or "",
        claim=run.claim,
        protocol=run.protocol,
        label=common_label(own) if own else "no verdict",
        own_label=own,
        overridden=run.override is not None,
        confidence=verdict.confidence if verdict is not None and run.override is None else None,
        cost=run.cost,
        turns=tuple(e.turn for e in events if isinstance(e, TurnCompleted)),
    )
