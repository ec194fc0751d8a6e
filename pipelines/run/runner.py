"""A run's life: validate the claim, wire models and tools, run the protocol on a thread, end the record.

``stream_run`` is the one entry point for the UI, the CLI and tests: it runs the protocol on
a background thread's event loop and yields events as they happen, so a page can render
while the debate goes on. Storing the events is ``event_writer.EventWriter``'s job, keeping
keys out of them ``redaction.Redactor``'s, answering a resumed run's calls the ``journal``'s.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pipelines.core.config import MAX_CLAIM_CHARS, ROLES, BudgetConfig, ConfigError, ModelSpec, RunConfig
from pipelines.core.domain import Claim, Turn, Verdict
from pipelines.core.errors import DebateDeskError, InvalidClaimError, RunBusyError
from pipelines.core.events import (
    Event,
    ModelCallCompleted,
    RunResumed,
    RunStarted,
    TurnCompleted,
    VerdictReached,
)
from pipelines.core.text.safety import check_claim_text
from pipelines.core.text.urls import scrub_url
from pipelines.newsroom.access.roles import Person, acting_name
from pipelines.protocols.base import get_protocol
from pipelines.record.digest import digest
from pipelines.record.journal import (
    Journal,
    reserved_evidence_ids,
)
from pipelines.record.outage import store_faults_plain
from pipelines.record.spill import replay_spills
from pipelines.record.store import RunStore, busy_message
from pipelines.run import step_gate
from pipelines.run.context import EvidenceIds, Review, RunContext
from pipelines.run.desk_settings import limits_on_resume, unpriced_message, unpriced_roles, within_desk
from pipelines.run.grounding import ground, rule_beside, settled_verdict
from pipelines.run.life import RunLife
from pipelines.run.llm.limits import Budget
from pipelines.run.llm.registry import get_backend
from pipelines.run.services import Services
from pipelines.run.step_gate import PendingReview, StepGate, make_reviewer
from pipelines.run.tools.frozen import FrozenEvidence
from pipelines.run.wiring import Models, tool_layers, wire_tools
from pipelines.stages.scoring import reads_faithfulness

log = logging.getLogger(__name__)


def validate_claim(text: str | None, max_chars: int = MAX_CLAIM_CHARS) -> Claim:
    """A claim worth checking: not empty, short enough to be one claim, no control characters, something visible.

    Every entry point (page, CLI, batch, import) comes through here or ``check_claim_text``.
    """
    cleaned = check_claim_text(text)
    if not cleaned:
        raise InvalidClaimError("the claim is empty: type the statement you want checked")
    if len(cleaned) > max_chars:
        raise InvalidClaimError(
            f"the claim is {len(cleaned):,} characters; the limit is {max_chars:,}. Check one claim at a time, "
            "or ingest a long text as a corpus on the Corpora page"
        )
    return Claim(text=cleaned)


DESK_LIMITS = "desk_limits"  # the key of a run's snapshot that keeps the desk's limits as they were when it started


def preflight(claim_text: str, config: RunConfig, services: Services) -> Claim:
    """Everything that can be checked before a run starts, each with a message that says how to fix it."""
    claim = validate_claim(claim_text)
    check_names(config)
    check_priced(config)
    services.ensure_corpus(config.corpus)
    return claim


def check_priced(config: RunConfig) -> None:
    """A money limit needs a price for every model the run uses; without one the limit could never be reached."""
    unpriced = unpriced_roles(config)
    if unpriced:
        raise ConfigError(unpriced_message(unpriced))


def under_desk_limits(config: RunConfig, services: Services) -> tuple[RunConfig, BudgetConfig]:
    """``config`` with limits no looser than the desk's and the desk's prices; and the desk's limits (stored with the run)."""
    desk = services.desk_settings().budget
    return config.model_copy(update={"budget": within_desk(config.budget, desk)}), desk


def check_names(config: RunConfig) -> None:
    """The protocol and every role's backend exist (raises with the valid names)."""
    get_protocol(config.protocol)
    for role in ROLES:
        get_backend(config.role(role).backend)


async def execute(
    claim: Claim,
    config: RunConfig,
    services: Services,
    emit: Callable[[Event], None],
    run_id: str,
    *,
    journal: Journal | None = None,
    gate: StepGate | None = None,
    recorded: Sequence[Event] = (),
    budget: Budget | None = None,
    frozen: FrozenEvidence | None = None,
) -> Verdict:
    """Run the configured protocol on a validated claim; every event goes to ``emit``.

    With a ``journal`` every model answer and tool result is recorded (and, on a resume,
    served back); with a ``gate`` the run pauses for the checker after each round; with a
    ``budget`` every model call is counted and the run stops (``BudgetExhaustedError``) before
    a call over it; with ``frozen`` evidence every search is answered from a stored run's.
    """
    protocol = get_protocol(config.protocol)
    models = Models(services, emit, journal=journal, budget=budget)
    wanted = {  # the roles whose answers are read from token probabilities
        *protocol.probability_roles,
        *(("judge",) if config.belief.per_round or config.belief.calibrated_ruling else ()),
        *(("scorer",) if reads_faithfulness(config) else ()),
    }
    llms = await models.for_roles(config, wanted)
    tools = wire_tools(services, config, tool_layers(config, frozen=frozen, journal=journal))
    turns: list[Turn] = []  # every argument, for the calibrated ruling's second reading of the contested exhibits

    def emit_keeping_turns(evt: Event) -> None:
        if isinstance(evt, TurnCompleted):
            turns.append(evt.turn)
        emit(evt)

    ids = EvidenceIds(reserved_evidence_ids(recorded))
    ctx = RunContext(
        run_id=run_id,
        claim=claim,
        config=config,
        llms=llms,
        tools=tools,
        emit=emit_keeping_turns,
        reviewer=make_reviewer(emit, gate, step_gate.recorded_reviews(recorded), next_id=ids.next),
        ids=ids,
        llm_factory=models,
        calibration_dir=services.settings.data_dir,  # the desk's own calibrations (python -m pipelines calibrate) before the shipped ones
    )
    reading = await ground(ctx)  # a debate grounded in desk's exhibits reads them first (belief.grounded)
    debated_before = any(isinstance(e, TurnCompleted) for e in recorded)  # a resumed run that had argued goes on arguing
    verdict = settled_verdict(ctx, reading, debated_before=debated_before)  # no debate where the exhibits settle it (belief.debate_when)
    if verdict is None:
        verdict = await protocol.runner()(ctx)
        verdict = await rule_beside(ctx, verdict, reading, turns)  # the calibrated ruling beside the protocol's own (belief.verdict)
    emit(VerdictReached(verdict=verdict))
    return verdict


class RunHandle:
    """A run going on in a background thread: every event so far, whether it waits for the checker, how it ended.

    The page keeps the handle (in session state) across reruns: each rerun renders
    ``events`` again and goes on from there; a paused run shows the review form, whose
    callback calls ``submit``. The run's thread does not depend on any page being open.
    """

    def __init__(self, run_id: str, claim: Claim, config: RunConfig, gate: StepGate | None, recorded: Sequence[Event] = ()) -> None:
        self.run_id = run_id
        self.claim = claim
        self.config = config
        self.gate = gate
        self.events: list[Event] = list(recorded)
        self.resumed_at = len(recorded)  # events before this index came from the store
        self.status: str = "running"
        self.error: BaseException | None = None
        self._cond = threading.Condition()
        self._done = False
        self.thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        with self._cond:
            return self._done

    @property
    def pending(self) -> PendingReview | None:
        """The round the run waits on the checker for, if it does."""
        return self.gate.pending if self.gate is not None else None

    def push(self, evt: Event) -> None:
        with self._cond:
            self.events.append(evt)
            self._cond.notify_all()

    def close(self, status: str, error: BaseException | None = None) -> None:
        with self._cond:
            self.status = status
            self.error = error
            self._done = True
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> bool:
        """Block until there are events past ``seen``, the run ends, or ``timeout``; True if something changed."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.events) > seen or self._done, timeout=timeout)

    def submit(self, review: Review, by: Person | str, note: str = "") -> None:
        """The checker's decision for the paused round (the page's callback calls this); a Person is checked at this moment."""
        if self.gate is None:
            raise ValueError("this run is not in step mode")
        self.gate.submit(review, acting_name(by, "edit_pause"), note)

    def page_alive(self) -> None:
        """The page showing this run is open (a paused run whose page goes silent is freed: ``StepGate.page_alive``)."""
        if self.gate is not None:
            self.gate.page_alive()

    def abandon(self, reason: str = "stopped by the checker without a decision") -> None:
        if self.gate is not None:
            self.gate.abandon(reason)

    def stream(self, start: int = 0) -> Iterator[Event]:
        """Every event from ``start`` on, as it happens, until the run ends; a crash is re-raised at the end."""
        seen = start
        while True:
            with self._cond:
                self._cond.wait_for(lambda n=seen: len(self.events) > n or self._done)  # type: ignore[misc]
                batch = self.events[seen:]
                finished = self._done
            yield from batch
            seen += len(batch)
            if finished and seen >= len(self.events):
                break
        if self.thread is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error


def start_run(
    claim_text: str,
    config: RunConfig,
    services: Services,
    run_id: str | None = None,
    *,
    interactive: bool = False,
    by: Person | str = "",
    frozen_from: str | None = None,
    batch_budget: Budget | None = None,
) -> RunHandle:
    """Validate, store and start a run in the background; returns its handle at once.

    ``interactive`` (the page) gives a step-mode run a gate to pause on; without it
    (the CLI, tests) step mode has no one to wait for and the run goes straight on.
    ``by`` is who started it (the signed-in Person, checked now), kept in RunStarted. ``frozen_from`` names a
    stored run whose evidence is the new run's only source (a re-run with another protocol or
    model). ``batch_budget`` is the batch's spend limit, shared by its runs.
    """
    by = acting_name(by, "run")
    config, desk_limits = under_desk_limits(config, services)
    claim = preflight(claim_text, config, services)
    frozen = frozen_evidence(frozen_from, services) if frozen_from else None
    run_id = run_id or uuid.uuid4().hex[:12]
    store = services.store
    gate = _gate_for(config, store, run_id) if interactive else None
    handle = RunHandle(run_id, claim, config, gate)
    source = frozen.source_run if frozen is not None else ""
    # The limits the run starts under are in its snapshot (``budget``), beside the desk's at that moment: a resume holds them.
    snapshot = {**config.snapshot(), DESK_LIMITS: desk_limits.model_dump(mode="json")}
    if store is not None:
        with store_faults_plain(store.url):
            store.create_run(run_id, claim.text, config.protocol, snapshot, source_run=source, by=by)
    RunLife(handle, services, budget=Budget.for_run(config.budget, parent=batch_budget), frozen=frozen).start(
        [RunStarted(run_id=run_id, claim=claim.text, protocol=config.protocol, config=snapshot, by=by, source_run=source)]
    )
    return handle


def frozen_evidence(source_run: str, services: Services) -> FrozenEvidence:
    """The evidence a stored run retrieved (and its checker pasted), to answer a re-run's searches."""
    store = services.store
    if store is None or store.get_run(source_run) is None:
        raise DebateDeskError(f"no run {source_run!r} in the store to re-run on; pick one in History")
    return FrozenEvidence.of(source_run, digest(store.events(source_run)).evidence.values())


def resume_run(
    run_id: str,
    services: Services,
    *,
    interactive: bool = False,
    secrets_from: RunConfig | None = None,
    by: Person | str = "",
    limits: BudgetConfig | None = None,
    may_raise: bool = False,
) -> RunHandle:
    """Go on with a failed or interrupted run from its last completed step.

    The protocol runs again from the start with the journal answering every model and tool
    call made before (no network, no model time); events already stored are not stored
    again, so the finished record has every event once, in order, with a RunResumed marker.
    API keys are not in the record: they come from ``secrets_from`` or the environment. The
    spend limits the run was stored with hold (``desk_settings.limits_on_resume``): where an
    editor has raised the desk's limit since, the run follows it; ``limits`` lowers them, and
    raises them (never past the desk's) only with ``may_raise``, for a person who may change
    the desk's settings. What the run spent before counts towards them.
    """
    by = acting_name(by, "run")
    store = services.store
    if store is None:
        raise DebateDeskError("resuming needs the run store; this app runs without one")
    with store_faults_plain(store.url):
        return _resume(
            run_id, store, services, interactive=interactive, secrets_from=secrets_from, by=by, limits=limits, may_raise=may_raise
        )


def _resume(
    run_id: str,
    store: RunStore,
    services: Services,
    *,
    interactive: bool,
    secrets_from: RunConfig | None,
    by: str,
    limits: BudgetConfig | None,
    may_raise: bool,
) -> RunHandle:
    replay_spills(store, services.settings.data_dir)  # events kept on disk while the store was away go in first
    store.reconcile()
    summary = store.get_run(run_id)
    if summary is None:
        raise DebateDeskError(f"no run {run_id!r} in the store; list runs with `python -m pipelines runs`")
    if summary.origin != "run":
        raise DebateDeskError(f"run {run_id} was imported ({summary.origin}); imported runs are kept for audit, not resumed here")
    if summary.status == "running":
        raise RunBusyError(busy_message(run_id, summary.status, store.owner_of(run_id), store.heartbeat_of(run_id)))
    if not summary.resumable:
        raise DebateDeskError(f"run {run_id} is {summary.status}; only failed or interrupted runs can be resumed")
    config = stored_config(summary.config, secrets_from)
    then = summary.config.get(DESK_LIMITS)
    desk_then = BudgetConfig.model_validate(then) if isinstance(then, dict) else None
    desk_now = services.desk_settings()
    if desk_now.version == 0:
        # No editor ever saved the desk's settings: its limits "now" are only this shell's environment, which may set none.
        # A run follows a raise of the desk's limit by an editor, never a shell that lacks the variable: its stored limits hold.
        desk_then = None
    held = limits_on_resume(config.budget, desk_then, desk_now.budget, limits, may_raise=may_raise)
    config = config.model_copy(update={"budget": held})
    check_names(config)
    check_priced(config)
    services.ensure_corpus(config.corpus)
    # One owner at a time: this process first (another session here may be resuming it), then the database's
    # compare-and-set on the status (another process may be); the loser replays nothing and calls no model.
    store.claim_run(run_id)
    try:
        attempt = store.reopen(run_id)
    except BaseException:
        store.release_run(run_id)
        raise
    try:
        # The limits it goes on under are stored with it (beside the desk's now): the next resume holds them, whatever its shell says.
        store.keep_config(
            run_id, {**summary.config, "budget": held.model_dump(mode="json"), DESK_LIMITS: desk_now.budget.model_dump(mode="json")}
        )
        recorded = store.events(run_id)  # read once the run is ours: nobody else adds to it now
        source = next((e.source_run for e in recorded if isinstance(e, RunStarted)), "")
        frozen = frozen_evidence(source, services) if source else None
    except BaseException:
        store.release_run(run_id)
        raise
    gate = _gate_for(config, store, run_id) if interactive else None
    handle = RunHandle(run_id, Claim(text=summary.claim), config, gate, recorded)
    life = RunLife(
        handle, services, recorded=recorded, answers=store.journal(run_id), budget=_budget_after(config.budget, recorded), frozen=frozen
    )
    life.start([RunResumed(attempt=attempt, replayed=len(recorded), by=by)], claimed=True)
    return handle


def _budget_after(limits: BudgetConfig, recorded: Sequence[Event]) -> Budget:
    """A resumed run's budget: what it spent before its resume counts (answers from a cache were free)."""
    budget = Budget.for_run(limits)
    tokens: dict[str, int] = {}
    calls = 0
    for evt in recorded:
        if isinstance(evt, ModelCallCompleted) and not evt.cached:
            calls += 1
            tokens[evt.model] = tokens.get(evt.model, 0) + evt.tokens_in + evt.tokens_out
    budget.spent_before(calls, tokens)
    return budget


def stored_config(snapshot: dict[str, Any], secrets_from: RunConfig | None) -> RunConfig:
    """A stored run's config again; a snapshot keeps no key, so each role's comes from ``secrets_from`` (or the environment)."""
    config = RunConfig.from_snapshot(snapshot)
    if secrets_from is None:
        return config
    return config.model_copy(update={role: _with_credentials(config.role(role), secrets_from.role(role)) for role in ROLES})


def debate_anyway(snapshot: dict[str, Any], secrets_from: RunConfig | None) -> RunConfig:
    """The config of a run whose debate was not run, as desk's exhibits settled the claim, with the debate forced
    (``belief.debate_when`` always): the run page's "Run the debate anyway" starts the same claim with it."""
    config = stored_config(snapshot, secrets_from)
    return config.model_copy(update={"belief": config.belief.model_copy(update={"debate_when": "always"})})


def _with_credentials(stored: ModelSpec, given: ModelSpec) -> ModelSpec:
    """The stored role with the given key, and the given base URL when it is the stored one with its credentials back."""
    update: dict[str, object] = {"api_key": given.api_key}
    if given.base_url and scrub_url(given.base_url) == stored.base_url:
        update["base_url"] = given.base_url
    return stored.model_copy(update=update)


def _gate_for(config: RunConfig, store: RunStore | None, run_id: str) -> StepGate | None:
    if not config.pauses.step_mode:
        return None
    heartbeat = (lambda: store.touch(run_id)) if store is not None else None
    return StepGate(timeout_s=config.pauses.pause_timeout_min * 60, heartbeat=heartbeat, page_gone_after_s=step_gate.PAGE_GONE_AFTER_S)


def stream_run(
    claim_text: str,
    config: RunConfig,
    services: Services,
    run_id: str | None = None,
    *,
    batch_budget: Budget | None = None,
    by: Person | str = "",
) -> Iterator[Event]:
    """Yield a run's events as they happen; the run itself goes on in a background thread.

    Bad input (empty or huge claim, unknown corpus, protocol or backend) raises before
    anything starts. Once started, a failure becomes a RunFailed event and what was produced
    so far stays in the store; a bug is re-raised here after its RunFailed event.
    """
    yield from start_run(claim_text, config, services, run_id, batch_budget=batch_budget, by=by).stream()
