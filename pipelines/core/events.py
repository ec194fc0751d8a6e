"""The typed events a protocol yields as it runs; the UI, the store and the CLI consume them.

Past-tense names; stream chunks end in ``Delta``. Every event has a ``type`` tag so a
stored or exported transcript parses back into the same classes (``parse_event``).
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from pipelines.core.domain import Admissibility, Evidence, Triplet, Turn, Verdict, Vote
from pipelines.core.errors import WEB_UNAVAILABLE

EVENT_TYPES: dict[str, type[Event]] = {}


class Event(BaseModel):
    """Base of every event: immutable, stamped with the wall-clock time it happened.

    Each subclass declares ``type: Literal["ClassName"] = "ClassName"``; subclasses
    register themselves so ``parse_event`` finds them by that tag.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    at: float = Field(default_factory=time.time)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        EVENT_TYPES[cls.__name__] = cls


class RunStarted(Event):
    type: Literal["RunStarted"] = "RunStarted"
    run_id: str
    claim: str
    protocol: str
    config: dict[str, Any] = Field(default_factory=dict)
    by: str = ""  # who started it, when the desk has sign-in (or the checker's name)
    source_run: str = ""  # a re-run on frozen evidence: the stored run whose evidence it used


class StageStarted(Event):
    type: Literal["StageStarted"] = "StageStarted"
    stage: str
    detail: str = ""


class StageCompleted(Event):
    type: Literal["StageCompleted"] = "StageCompleted"
    stage: str
    detail: str = ""


class StageFailed(Event):
    """A recoverable failure: one model call, one source, one judge. The run goes on."""

    type: Literal["StageFailed"] = "StageFailed"
    stage: str
    reason: str


class RoundStarted(Event):
    type: Literal["RoundStarted"] = "RoundStarted"
    round: int
    title: str = ""  # the section's heading when it is not "Round N", e.g. proclaim's "Role switch" after the debate

    @property
    def heading(self) -> str:
        return self.title or f"Round {self.round}"


class QueryIssued(Event):
    type: Literal["QueryIssued"] = "QueryIssued"
    agent: str
    round: int
    query: str
    tool: str
    rewritten: bool = False


class EvidenceRetrieved(Event):
    type: Literal["EvidenceRetrieved"] = "EvidenceRetrieved"
    agent: str
    round: int
    evidence: Evidence


class WebSearchUnavailable(Event):
    type: Literal["WebSearchUnavailable"] = "WebSearchUnavailable"
    reason: str
    fallback: str = ""
    agent: str = ""
    round: int = 0

    @property
    def why(self) -> str:
        """The reason alone, for a line that says already that the web was unavailable."""
        return self.reason.removeprefix(WEB_UNAVAILABLE)


class WebResultsFiltered(Event):
    """Web results the run's source policy kept away from the agents, and why."""

    type: Literal["WebResultsFiltered"] = "WebResultsFiltered"
    agent: str
    round: int
    query: str
    kept: int
    filtered: int
    policy: str
    reasons: tuple[str, ...] = ()


class ArgumentDelta(Event):
    """A chunk of an agent's argument as the model streams it."""

    type: Literal["ArgumentDelta"] = "ArgumentDelta"
    turn_id: str
    agent: str
    round: int
    text: str


class TurnCompleted(Event):
    type: Literal["TurnCompleted"] = "TurnCompleted"
    turn: Turn


class StatementChecked(Event):
    """One atomic statement of an answer, and the evidence it rests on (if any)."""

    type: Literal["StatementChecked"] = "StatementChecked"
    turn_id: str
    statement: str
    supported: bool
    evidence_id: str | None = None


class ScoreComputed(Event):
    type: Literal["ScoreComputed"] = "ScoreComputed"
    target: str
    metric: str
    value: float
    threshold: float | None = None
    detail: str = ""


class ModelCallCompleted(Event):
    """Accounting for one model call: who, which model, tokens and time."""

    type: Literal["ModelCallCompleted"] = "ModelCallCompleted"
    role: str
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reused: int = 0  # of tokens_in, those the server kept from an earlier call's prompt (its prompt cache): not read again
    seconds: float = 0.0
    cached: bool = False
    structured: str | None = None  # a structured call's output mode: json_schema, json_object or prompt (see llm/structured_modes.py)
    cancelled: bool = False  # sent, then cancelled before its answer (a parallel call hit a spend limit): tokens estimated
    cost: float | None = None  # its price, at the run's prices per 1,000 tokens; None when the run has no prices

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Only a cancelled or priced call says so: an unpriced answered call's record (and the golden stream) stays as it was.
        data: dict[str, Any] = handler(self)
        if not self.cancelled:
            data.pop("cancelled", None)
        if self.cost is None:
            data.pop("cost", None)
        return data


class VoteCast(Event):
    type: Literal["VoteCast"] = "VoteCast"
    vote: Vote


class VerdictReached(Event):
    type: Literal["VerdictReached"] = "VerdictReached"
    verdict: Verdict


class ModelServerRestarted(Event):
    """The local model server stopped mid-run and was started again; the call it broke was asked again.

    ``role``: whose call lost the server; ``reason``: the error that call got; ``seconds``: how
    long the new server took to start. Calls already answered are not asked again.
    """

    type: Literal["ModelServerRestarted"] = "ModelServerRestarted"
    role: str
    reason: str
    seconds: float = Field(ge=0)


class RunFailed(Event):
    """The run could not finish; what it produced so far is kept."""

    type: Literal["RunFailed"] = "RunFailed"
    reason: str


# --- Durable runs and the checker in the loop (resume, step mode, verdict override) ---


class RunResumed(Event):
    """A run that stopped (crash, closed tab) goes on from its journal; events before this one are not repeated."""

    type: Literal["RunResumed"] = "RunResumed"
    attempt: int = Field(ge=2)
    replayed: int = Field(ge=0, description="events already in the record when the run resumed")
    by: str = ""  # who resumed it


class BudgetStop(BaseModel):
    """Which spend limit stopped a run: a run's own or its batch's, on calls, tokens or money, and how much was used of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    scope: Literal["run", "batch"]
    limit: Literal["calls", "tokens", "cost"]
    used: float
    allowed: float

    def says(self) -> str:
        """``stopped by budget: 40 of 40 model calls`` (a batch's limit says so)."""
        whose = "the batch's budget" if self.scope == "batch" else "budget"
        if self.limit == "cost":
            return f"stopped by {whose}: {self.used:.4g} of {self.allowed:.4g} spent"
        return f"stopped by {whose}: {self.used:,.0f} of {self.allowed:,.0f} {LIMIT_WORDS[self.limit]}"


LIMIT_WORDS = {"calls": "model calls", "tokens": "tokens", "cost": "spent"}


class RunInterrupted(Event):
    """The run stopped without failing (a step-mode pause nobody answered, a spend limit reached); it can be resumed."""

    type: Literal["RunInterrupted"] = "RunInterrupted"
    reason: str
    budget: BudgetStop | None = None  # set when a spend limit stopped it
    paused_round: int | None = None  # set when the page holding a step-mode pause went away: free for anyone to take over

    @property
    def stop_reason(self) -> str | None:
        """Why the run stands stopped where it can be taken up again (a spend limit, a pause its page left), from the
        event's fields, never from ``reason``'s words; None for another interruption (the store went away, a crash)."""
        if self.budget is not None:
            return self.budget.says()
        if self.paused_round is not None:
            return f"paused at round {self.paused_round}, free to take over"
        return None


class StepPaused(Event):
    """Step mode: the run waits for the checker after a round, with the queries it plans next (and, after a decomposition, its plan)."""

    type: Literal["StepPaused"] = "StepPaused"
    round: int
    next_queries: dict[str, str] = Field(default_factory=dict)
    plan_kind: str = ""  # "premises", "triplets": what the plan below is, when the pause follows a decomposition
    plan: tuple[str, ...] = ()


class CheckerEditedQuery(Event):
    type: Literal["CheckerEditedQuery"] = "CheckerEditedQuery"
    round: int
    agent: str
    before: str
    after: str
    by: str


class CheckerAddedQuery(Event):
    type: Literal["CheckerAddedQuery"] = "CheckerAddedQuery"
    round: int
    query: str
    by: str


class CheckerStruckEvidence(Event):
    """The checker struck an item: no agent sees or cites it from then on."""

    type: Literal["CheckerStruckEvidence"] = "CheckerStruckEvidence"
    round: int
    evidence_id: str
    reason: str
    by: str


class CheckerAdmittedEvidence(Event):
    """The checker admitted an item (overriding a strike or an admissibility score)."""

    type: Literal["CheckerAdmittedEvidence"] = "CheckerAdmittedEvidence"
    round: int
    evidence_id: str
    reason: str
    by: str


class CheckerAddedEvidence(Event):
    """Evidence the checker pasted (text, or a page the app fetched), added to the pool."""

    type: Literal["CheckerAddedEvidence"] = "CheckerAddedEvidence"
    round: int
    evidence: Evidence
    by: str


class CheckerEditedPlan(Event):
    """The checker rewrote the run's plan after its decomposition (proclaim's premises, mermaid's triplets) before any search."""

    type: Literal["CheckerEditedPlan"] = "CheckerEditedPlan"
    round: int
    kind: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    by: str


class StepResumed(Event):
    """The checker let the run go on (``continue``) or told it to stop debating and rule (``stop``)."""

    type: Literal["StepResumed"] = "StepResumed"
    round: int
    action: Literal["continue", "stop"]
    by: str
    note: str = ""


class VerdictOverridden(Event):
    """The checker's final verdict; the model's verdict stays beside it in the record."""

    type: Literal["VerdictOverridden"] = "VerdictOverridden"
    model_verdict: Verdict | None = None
    label: str = Field(min_length=1)
    note: str = ""
    by: str


class RecordImported(Event):
    """A record file was imported into this desk: the ``events`` events after this one are what the file says, not this desk's doing.

    Stored first by the import, before the file's events, so a replay and the digest know
    from the start that the overrides and interventions that follow are the file's word.
    ``by`` is whoever imported it (from the sign-in), ``source`` the file's name, ``check``
    what verify-record said of the file (``intact`` only when it was signed, the signature
    held and every event matched its chain), ``signer`` the fingerprint of the key that
    signed it ("" when none did).
    """

    type: Literal["RecordImported"] = "RecordImported"
    source: str
    by: str
    events: int = Field(ge=0)
    check: str
    intact: bool = False
    signer: str = ""
    this_desk: bool = False  # the file was signed with this desk's own key


# What the checker does to a run (step mode and the verdict override), in the order the record lists them.
INTERVENTIONS: tuple[type[Event], ...] = (
    CheckerEditedPlan,
    CheckerEditedQuery,
    CheckerAddedQuery,
    CheckerStruckEvidence,
    CheckerAdmittedEvidence,
    CheckerAddedEvidence,
    StepResumed,
    VerdictOverridden,
)


# --- Courtroom protocols (proclaim): every term of every score, so the audit screens can show it.


class PremisesDecomposed(Event):
    type: Literal["PremisesDecomposed"] = "PremisesDecomposed"
    premises: tuple[str, ...]


class NoveltyAssessed(Event):
    """novelty = 1 - max cosine to the pool; the item joins the pool only at or above the threshold."""

    type: Literal["NoveltyAssessed"] = "NoveltyAssessed"
    evidence_id: str
    round: int
    novelty: float
    threshold: float
    joined: bool


class AdmissibilityAssessed(Event):
    type: Literal["AdmissibilityAssessed"] = "AdmissibilityAssessed"
    evidence_id: str
    round: int
    admissibility: Admissibility


class RetrievalSummarized(Event):
    """One round's retrieval: candidates, how many joined, their mean novelty, the pool size after."""

    type: Literal["RetrievalSummarized"] = "RetrievalSummarized"
    round: int
    candidates: int
    joined: int
    mean_novelty: float | None
    pool_size: int


class ReflectionScored(Event):
    """A counsel's self-reflection: s_ref = w_l logic + w_n novelty + w_r rebuttal, and what to look for next."""

    type: Literal["ReflectionScored"] = "ReflectionScored"
    agent: str
    round: int
    logic: float
    novelty: float
    rebuttal: float
    s_ref: float
    discovery_need: str = ""


class CriticRuled(Event):
    type: Literal["CriticRuled"] = "CriticRuled"
    round: int
    scores: dict[str, float]
    resolved: bool
    leaning: str = ""
    reason: str = ""


class ExpertWitnessRuled(Event):
    type: Literal["ExpertWitnessRuled"] = "ExpertWitnessRuled"
    round: int
    requested_by: str
    field: str
    granted: bool
    persona: str = ""
    reason: str = ""


class DebateStopped(Event):
    """Why the rounds ended: the stop rule that fired (or max rounds, or the checker)."""

    type: Literal["DebateStopped"] = "DebateStopped"
    round: int
    rule: str
    detail: str = ""


class RoleSwitchScored(Event):
    type: Literal["RoleSwitchScored"] = "RoleSwitchScored"
    gamma: float
    delta_rs: float
    reason: str = ""


class PremiseChecked(Event):
    """Whether the arguments addressed a premise, and which turns did."""

    type: Literal["PremiseChecked"] = "PremiseChecked"
    index: int
    premise: str
    addressed: bool
    similarity: float
    turns: tuple[str, ...] = ()


class ConfidenceComputed(Event):
    """The panel's decision and every term of its confidence."""

    type: Literal["ConfidenceComputed"] = "ConfidenceComputed"
    label: str
    votes: dict[str, int]
    winning_votes: int
    total_votes: int
    tie_break: str = ""
    vote_share_term: float
    quality_sum: float
    quality_term: float
    c_base: float
    delta_rs: float
    s_ref: float | None
    delta_ref: float
    unclamped: float
    floor_applied: bool
    c_final: float


# --- label probabilities, and the radar / madke / mermaid protocols ---------------------------


class LabelProbabilitiesEstimated(Event):
    """A model's probabilities over a fixed set of answers (labels, STOP/CONTINUE), and how they were read.

    ``method`` is "logprobs" (the label tokens' probabilities) or "sampling" (answers sampled
    and counted, when the backend gives no token probabilities; ``note`` says why).
    """

    type: Literal["LabelProbabilitiesEstimated"] = "LabelProbabilitiesEstimated"
    agent: str
    round: int
    probabilities: dict[str, float]
    method: Literal["logprobs", "sampling"]
    samples: int = 0
    note: str = ""


class StopRuleChecked(Event):
    """RADAR's early-stop rule after a round: stop only if s >= tau_s and c >= tau_v."""

    type: Literal["StopRuleChecked"] = "StopRuleChecked"
    round: int
    phase: str
    stop_margin: float
    verdict_confidence: float
    label: str
    tau_s: float
    tau_v: float
    stop: bool


class OmittedContextFound(Event):
    """A piece of context the claim leaves out, as the Scientist found it."""

    type: Literal["OmittedContextFound"] = "OmittedContextFound"
    agent: str
    round: int
    point: str
    cited: tuple[str, ...] = ()


class EvidenceSelected(Event):
    """Which pool items a debater picked for its turn (or that it found none useful)."""

    type: Literal["EvidenceSelected"] = "EvidenceSelected"
    agent: str
    round: int
    evidence_ids: tuple[str, ...] = ()
    none_found: bool = False
    reason: str = ""


class AgreementChecked(Event):
    """A judge's answer to whether the debaters agree and are consistent after a round."""

    type: Literal["AgreementChecked"] = "AgreementChecked"
    round: int
    agree: bool
    consistent: bool
    reason: str = ""


class ClaimDecomposed(Event):
    """The claim as (subject, relation, object) triplets plus a topic; ``source`` says who wrote them."""

    type: Literal["ClaimDecomposed"] = "ClaimDecomposed"
    topic: str
    triplets: tuple[Triplet, ...]
    source: Literal["model", "checker", "fallback"] = "model"


class ReasoningStepTaken(Event):
    """One ReAct step: a tool call with its reason, or the answer."""

    type: Literal["ReasoningStepTaken"] = "ReasoningStepTaken"
    agent: str
    step: int
    thought: str
    action: str
    query: str = ""
    reason: str = ""
    forced: bool = False


class MemoryRecalled(Event):
    """An evidence item kept from an earlier claim, recalled for this one (and why)."""

    type: Literal["MemoryRecalled"] = "MemoryRecalled"
    agent: str
    step: int
    evidence: Evidence
    match: str
    score: float
    remembered_at: float
    for_claim: str = ""


class MemoryUpdated(Event):
    """What this run added to the evidence memory."""

    type: Literal["MemoryUpdated"] = "MemoryUpdated"
    added: int
    refreshed: int


# --- desk: exhibits read for their stance, and a verdict aggregated from them ---------------------


class ExhibitStanceRead(Event):
    """How likely the model finds that one exhibit supports, contradicts or does not address the claim.

    ``probabilities`` (SUPPORTS / REFUTES / UNRELATED) average ``per_order``, the readings with
    the answer options in different orders; ``orders_agree`` says whether every order gave the
    same most likely answer. ``round`` 2 is a contested exhibit read again after the debate.
    """

    type: Literal["ExhibitStanceRead"] = "ExhibitStanceRead"
    evidence_id: str
    round: int = 1
    probabilities: dict[str, float]
    per_order: tuple[dict[str, float], ...] = ()
    orders_agree: bool = True
    method: Literal["logprobs", "sampling"] = "logprobs"
    quoted: tuple[str, ...] = ()
    note: str = ""


class VerdictAggregated(Event):
    """The exhibits' stances combined into the claim's probabilities, and how the label followed from them.

    ``raw`` is the uncalibrated support probability, ``calibrated`` the same after the
    calibration fitted on training claims (``calibration`` names it); ``probabilities`` are
    p(SUPPORTS), p(REFUTES), p(NOT ENOUGH INFO); ``debated`` says whether the contested
    exhibits were argued over and read again.
    """

    type: Literal["VerdictAggregated"] = "VerdictAggregated"
    round: int = 1
    probabilities: dict[str, float]
    label: str
    confidence: float
    raw: float
    calibrated: float
    features: dict[str, float] = Field(default_factory=dict)
    calibration: str = ""
    rests_on: tuple[str, ...] = ()
    points_to: dict[str, str] = Field(default_factory=dict)  # exhibit id -> supported / refuted / unrelated
    reason: str = ""
    conflict: bool = False
    debated: bool = False
    read: int = 0  # exhibits whose stances it weighs (0: not said, runs from before 2026-12-02)
    found: int = 0  # exhibits found when reading stopped early (desk.stop_early), else 0: every one found was read
    bound: tuple[float, float] | None = None  # p(supported) whatever the exhibits found and not read say
    set_aside: int = 0  # exhibits the search found and desk did not read: further from the claim than desk.min_likeness
    nearest: float | None = None  # the likeness to the claim (MiniLM cosine) of the nearest passage the search found
    ground: str = ""  # "measured": its calibration was measured on this corpus; "unmeasured": a ranking only ('' before 2026-12-02)
    ground_note: str = ""  # the card's words for it (pipelines/calibration/ground.py)


# --- every protocol: the judge's belief after each round ---------------------------------------


class BeliefRead(Event):
    """The judge's probabilities of SUPPORTS / REFUTES / NOT ENOUGH INFO given the debate so far (stages/belief.py).

    ``round`` is the round just argued (0: before any argument, e.g. desk's exhibits alone);
    ``over`` says in words what was read ("after round 2: 4 turns, 6 evidence items");
    ``per_order`` holds each option order's reading, ``probabilities`` their mean.
    ``reliability`` says how well this model's belief told supported from refuted claims when its
    calibration was fitted (stages/belief.py's ``reliability``; '' when that was not measured).
    ``method`` "exhibits": not asked of the judge but desk's calibrated weighing of its exhibits'
    stances (``weighed_belief``), where desk has a calibration; ``per_order`` is then empty.
    """

    type: Literal["BeliefRead"] = "BeliefRead"
    round: int
    probabilities: dict[str, float]
    over: str = ""
    turns: int = 0
    evidence_ids: tuple[str, ...] = ()
    per_order: tuple[dict[str, float], ...] = ()
    method: Literal["logprobs", "sampling", "exhibits"] = "logprobs"
    note: str = ""
    reliability: str = ""


def parse_event(data: dict[str, Any] | str) -> Event:
    """Rebuild an event from its JSON form (as stored or exported); raises ValueError."""
    raw = json.loads(data) if isinstance(data, str) else data
    kind = raw.get("type") if isinstance(raw, dict) else None
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}; known: {', '.join(sorted(EVENT_TYPES))}")
    return cls.model_validate(raw)


def dump_event(event: Event) -> dict[str, Any]:
    """The JSON-ready form of an event, with its type tag."""
    return event.model_dump(mode="json")
