"""A courtroom run folded from its events: every exhibit's ruling, each round's figures, the panel's terms.

The audit screens, History and exports read a run through this, live or stored, so they
never recompute a score: each value is the one the run emitted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pipelines.core.domain import Admissibility, Evidence, Turn, Verdict, Vote
from pipelines.core.events import (
    AdmissibilityAssessed,
    ConfidenceComputed,
    CriticRuled,
    DebateStopped,
    Event,
    EvidenceRetrieved,
    ExpertWitnessRuled,
    NoveltyAssessed,
    PremiseChecked,
    PremisesDecomposed,
    ReflectionScored,
    RetrievalSummarized,
    RoleSwitchScored,
    RunStarted,
    StageFailed,
    TurnCompleted,
    VerdictReached,
    VoteCast,
)

COURTROOM_EVENTS = (PremisesDecomposed, AdmissibilityAssessed, ConfidenceComputed)


@dataclass
class Exhibit:
    """One retrieved item with what the court made of it."""

    evidence: Evidence
    admissibility: Admissibility | None = None
    ruled_in_round: int | None = None
    novelty: float | None = None
    joined: bool | None = None  # None: not novelty-gated (the opening retrieval)
    cited_in: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """admitted / disputed / discarded; "redundant" when it never passed the novelty gate; "not assessed" when no ruling came."""
        if self.admissibility is not None:
            return self.admissibility.status
        return "redundant" if self.joined is False else "not assessed"


@dataclass
class RoundFigures:
    round: int
    candidates: int = 0
    joined: int = 0
    mean_novelty: float | None = None
    pool_size: int = 0
    s_ref: dict[str, float] = field(default_factory=dict)
    critic_scores: dict[str, float] = field(default_factory=dict)
    leaning: str = ""
    resolved: bool = False


@dataclass
class CourtRecord:
    claim: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    premises: tuple[str, ...] = ()
    exhibits: dict[str, Exhibit] = field(default_factory=dict)
    rounds: dict[int, RoundFigures] = field(default_factory=dict)
    reflections: list[ReflectionScored] = field(default_factory=list)
    experts: list[ExpertWitnessRuled] = field(default_factory=list)
    premise_checks: list[PremiseChecked] = field(default_factory=list)
    turns: dict[str, Turn] = field(default_factory=dict)
    votes: list[Vote] = field(default_factory=list)
    failed_judges: list[StageFailed] = field(default_factory=list)
    failures: list[StageFailed] = field(default_factory=list)
    role_switch: RoleSwitchScored | None = None
    stop: DebateStopped | None = None
    confidence: ConfidenceComputed | None = None
    verdict: Verdict | None = None
    is_courtroom: bool = False

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> CourtRecord:
        record = cls()
        for evt in events:
            record._add(evt)
        return record

    def setting(self, name: str, default: float) -> float:
        """A number from the run's proclaim config (the thresholds the run used), else the default."""
        value = self.config.get("proclaim", {}).get(name, default)
        return float(value) if isinstance(value, int | float) else default

    def round_figures(self, number: int) -> RoundFigures:
        return self.rounds.setdefault(number, RoundFigures(round=number))

    def _add(self, evt: Event) -> None:
        if isinstance(evt, COURTROOM_EVENTS):
            self.is_courtroom = True
        match evt:
            case RunStarted(claim=claim, config=config):
                self.claim, self.config = claim, config
            case PremisesDecomposed(premises=premises):
                self.premises = premises
            case EvidenceRetrieved(evidence=e):
                self.exhibits.setdefault(e.id, Exhibit(evidence=e))
            case NoveltyAssessed(evidence_id=eid, novelty=novelty, joined=joined):
                exhibit = self.exhibits.get(eid)
                if exhibit is not None and not exhibit.joined:  # once in the pool, later re-finds do not change it
                    exhibit.novelty, exhibit.joined = novelty, joined
            case AdmissibilityAssessed(evidence_id=eid, round=number, admissibility=ruling):
                exhibit = self.exhibits.get(eid)
                if exhibit is not None:
                    exhibit.admissibility, exhibit.ruled_in_round = ruling, number
            case RetrievalSummarized():
                figures = self.round_figures(evt.round)
                figures.candidates, figures.joined = evt.candidates, evt.joined
                figures.mean_novelty, figures.pool_size = evt.mean_novelty, evt.pool_size
            case ReflectionScored(agent=agent, round=number, s_ref=s_ref):
                self.reflections.append(evt)
                self.round_figures(number).s_ref[agent] = s_ref
            case CriticRuled(round=number):
                figures = self.round_figures(number)
                figures.critic_scores, figures.leaning, figures.resolved = dict(evt.scores), evt.leaning, evt.resolved
            case ExpertWitnessRuled():
                self.experts.append(evt)
            case TurnCompleted(turn=turn):
                self.turns[turn.id] = turn
                for eid in turn.cited:
                    if eid in self.exhibits and turn.id not in self.exhibits[eid].cited_in:
                        self.exhibits[eid].cited_in.append(turn.id)
            case PremiseChecked():
                self.premise_checks.append(evt)
            case RoleSwitchScored():
                self.role_switch = evt
            case DebateStopped():
                self.stop = evt
            case VoteCast(vote=vote):
                self.votes.append(vote)
            case StageFailed(stage=stage):
                self.failures.append(evt)
                if stage.startswith("panel: "):
                    self.failed_judges.append(evt)
            case ConfidenceComputed():
                self.confidence = evt
            case VerdictReached(verdict=verdict):
                self.verdict = verdict
                for eid in verdict.cited:
                    if eid in self.exhibits and "verdict" not in self.exhibits[eid].cited_in:
                        self.exhibits[eid].cited_in.append("verdict")
            case _:
                pass
