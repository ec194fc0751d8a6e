"""What a run hands its protocol and stages: the RunContext, its tools and step-mode reviews.

It sits below ``pipelines.stages`` and ``pipelines.protocols``, so both import it and neither
reaches up into the other.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from pipelines.core.config import ModelSpec, RunConfig
from pipelines.core.domain import Claim, Evidence
from pipelines.core.events import Event
from pipelines.run.llm.client import LLM
from pipelines.run.tools.corpus_index import CorpusIndex
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.web import WebSearch

if TYPE_CHECKING:
    from pipelines.run.tools.memory import EvidenceMemory


@dataclass
class Toolbox:
    """The evidence tools a run may use."""

    index: CorpusIndex
    web: WebSearch
    embedder: Embedder
    memory: EvidenceMemory | None = None  # evidence kept across claims (mermaid); None without a run store


@dataclass
class EvidenceIds:
    """A run's evidence ids (``E1``, ``E2``...); a resumed run gives an item found again the id it had before."""

    reserved: Mapping[str, str] = field(default_factory=dict)  # resume: evidence key -> the id it had before
    _counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next(self, key: str | None = None) -> str:
        """The id for the item found under ``key``: its reserved one, else a fresh one no reserved id takes.

        Reserving by key keeps ids stable however concurrent searches interleave on replay,
        so the replayed prompts match the journal.
        """
        if key is not None and key in self.reserved:
            return self.reserved[key]
        taken = set(self.reserved.values())
        while True:
            candidate = f"E{next(self._counter)}"
            if candidate not in taken:
                return candidate


T = TypeVar("T")


class RunState:
    """What stages keep between their calls in one run, one value per type: the claim's rewrites being written
    (stages/retrieval.py), a weighed belief's readings (stages/weighing.py). Typed by the stage that owns the value."""

    def __init__(self) -> None:
        self._held: dict[type, object] = {}

    def get(self, kind: type[T]) -> T | None:
        held = self._held.get(kind)
        return held if isinstance(held, kind) else None

    def keep(self, value: T) -> T:
        self._held[type(value)] = value
        return value


@dataclass(frozen=True)
class RunContext:
    """Everything a protocol needs, passed in whole when the run starts: models per role, tools, the event sink.

    Frozen: no field is set after construction. What changes as the run goes is in its containers: the evidence
    ``pool``, what the checker ``struck`` and ``admitted``, the ``exhibits`` grounding reads, the stages' ``state``.
    """

    run_id: str
    claim: Claim
    config: RunConfig
    llms: Mapping[str, LLM]
    tools: Toolbox
    emit: Callable[[Event], None]
    pool: dict[str, Evidence] = field(default_factory=dict)
    struck: dict[str, str] = field(default_factory=dict)
    admitted: dict[str, str] = field(default_factory=dict)  # evidence id -> the checker's reason
    reviewer: Reviewer | None = None
    ids: EvidenceIds = field(default_factory=EvidenceIds)
    llm_factory: LLMFactory | None = None
    calibration_dir: Path | None = None  # the data folder whose calibrations/ desk reads first (None: the shipped ones only)
    exhibits: list[Evidence] = field(default_factory=list)  # a grounded debate's starting evidence: the exhibits, ranked
    state: RunState = field(default_factory=RunState)

    def llm(self, role: str) -> LLM:
        return self.llms[role]

    async def seat_llm(self, role: str, overrides: Mapping[str, str]) -> LLM:
        """The model for an extra seat (e.g. one judge of a panel): ``role``'s spec with ``overrides``.

        Without overrides (or without a factory, as in hand-built test contexts) it is the role's own model.
        """
        if not overrides or self.llm_factory is None:
            return self.llm(role)
        return await self.llm_factory(role, self.config.role(role).model_copy(update=dict(overrides)))

    async def review(self, round: int, next_queries: dict[str, str], plan: OpeningPlan | None = None) -> Review:
        """Step mode's pause point: protocols call it after each round with the queries they plan next.

        After a decomposition a protocol passes its ``plan`` too (proclaim's premises, mermaid's
        triplets): the checker may rewrite it, and ``Review.plan`` holds the new one.
        Without a reviewer (the default) the run goes straight on. Struck evidence is
        remembered here so ``usable`` keeps it away from the agents from then on.
        """
        if self.reviewer is None:
            return Review()
        decision = await (self.reviewer(round, next_queries, plan) if plan is not None else self.reviewer(round, next_queries))
        self.struck.update(decision.struck)
        for evidence_id, reason in decision.admitted.items():
            self.struck.pop(evidence_id, None)
            self.admitted[evidence_id] = reason
        for evidence in decision.added:
            self.pool[evidence.id] = evidence
        return decision

    def usable(self, items: list[Evidence]) -> list[Evidence]:
        """The items an agent may see: everything but what the checker struck."""
        return [e for e in items if e.id not in self.struck]

    def next_evidence_id(self, key: str | None = None) -> str:
        """A fresh evidence id, or the one a resumed run's item had before (``EvidenceIds.next``)."""
        return self.ids.next(key)


LLMFactory = Callable[[str, ModelSpec], Awaitable[LLM]]


@dataclass(frozen=True)
class Review:
    """What a checker decided when a step-mode run paused after a round (empty: go on as planned)."""

    queries: dict[str, str] = field(default_factory=dict)  # agent -> the next query to use
    extra_queries: tuple[str, ...] = ()
    struck: dict[str, str] = field(default_factory=dict)  # evidence id -> reason
    admitted: dict[str, str] = field(default_factory=dict)  # evidence id -> reason (undoes a strike)
    added: tuple[Evidence, ...] = ()
    stop: bool = False
    plan: tuple[str, ...] | None = None  # the checker's rewrite of the plan, one item a line; None: as planned


@dataclass(frozen=True)
class OpeningPlan:
    """What a protocol decided to check before it searches: ``kind`` names the items (premises, triplets)."""

    kind: str
    items: tuple[str, ...]


class Reviewer(Protocol):
    """Step mode's reviewer: the checker's decision for a round (and, after a decomposition, for the plan)."""

    def __call__(self, round: int, next_queries: dict[str, str], plan: OpeningPlan | None = None, /) -> Awaitable[Review]: ...
