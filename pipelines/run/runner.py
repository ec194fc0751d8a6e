"""A run's life: validate the claim, wire models and tools, run the protocol on a thread, end the record.

``stream_run`` is the one entry point for the UI, the CLI and tests: it runs the protocol on
a background thread's event loop and yields events as they happen, so a page can render
while the debate goes on. Storing the events is ``event_writer.EventWriter``'s job, keeping
keys out of them ``redaction.Redactor``'s, answering a resumed run's calls the ``journal``'s.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence

from pipelines.access.roles import Person, acting_name
from pipelines.config import MAX_CLAIM_CHARS, ROLES, BudgetConfig, ConfigError, ModelSpec, RunConfig
from pipelines.domain import Claim, Turn, Verdict
from pipelines.errors import DebateDeskError, InvalidClaimError, RunBusyError, StoreUnavailableError
from pipelines.events import (
    ArgumentDelta,
    Event,
    ModelCallCompleted,
    RunFailed,
    RunInterrupted,
    RunResumed,
    RunStarted,
    StageCompleted,
    StageStarted,
    TurnCompleted,
    VerdictReached,
)
from pipelines.llm.cache import caches
from pipelines.llm.client import LLM
from pipelines.llm.limits import Budget, BudgetExhaustedError
from pipelines.llm.registry import get_backend
from pipelines.protocols.base import get_protocol
from pipelines.record.digest import digest
from pipelines.record.event_writer import EventWriter, StorePaused
from pipelines.record.journal import (
    EventDeduper,
    Journal,
    JournalCache,
    JournaledIndex,
    JournaledWeb,
    JournalFirstCache,
    reserved_evidence_ids,
)
from pipelines.record.outage import fault_message, is_store_fault, store_faults_plain
from pipelines.record.redaction import Redactor, StreamRedactor
from pipelines.record.spill import replay_spills
from pipelines.record.store import RunStore, busy_message
from pipelines.run import step_gate
from pipelines.run.context import Review, RunContext, Toolbox
from pipelines.run.desk_settings import limits_on_resume, unpriced_message, unpriced_roles, within_desk
from pipelines.run.grounding import ground, rule_beside
from pipelines.run.server_restart import ServerRestarts
from pipelines.run.services import Services
from pipelines.run.step_gate import PauseFreedError, PendingReview, RunInterruptedError, StepGate, make_reviewer
from pipelines.stages.scoring import reads_faithfulness
from pipelines.text.safety import check_claim_text
from pipelines.text.urls import scrub_url
from pipelines.tools.corpus_index import CorpusIndex
from pipelines.tools.frozen import FrozenEvidence, FrozenIndex, FrozenWeb
from pipelines.tools.web import PolicyFilteredSearch, WebSearch, filtered, source_policy

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
    journal_cache = JournalCache(journal) if journal is not None else None
    announced: set[str] = set()
    restarts = ServerRestarts(services, emit)

    async def make_llm(role: str, spec: ModelSpec) -> LLM:
        backend = get_backend(spec.backend)
        announce = backend.name == "embedded" and not announced
        if announce:
            emit(StageStarted(stage="model", detail="starting the embedded model (the first start takes a while)"))
        # Building a model can take long (the embedded server starts), so off the loop; one built before is at hand.
        chat = services.built_chat_model(spec)
        if chat is None:
            chat = await asyncio.to_thread(services.chat_model, spec)
        if announce:
            emit(StageCompleted(stage="model"))
            announced.add(backend.name)
        return LLM(
            chat,
            role=role,
            model_name=spec.model or backend.default_model or backend.name,
            max_retries=spec.max_retries,
            limiter=services.limiters.get(
                f"{spec.backend}|{spec.base_url}", backend.parallel_calls(chat, services.settings, spec.concurrency)
            ),
            on_call=emit,
            cache=JournalFirstCache.over(journal_cache, services.response_cache if caches(spec) else None),
            params={"temperature": spec.temperature, "max_tokens": spec.max_tokens, "base_url": spec.base_url},
            budget=budget,
            # A local server the run started can be started again when it dies mid-run; a remote endpoint cannot.
            reconnect=restarts.hook(role, spec) if backend.still_serves is not None else None,
        )

    # Roles that want token probabilities first: the embedded server they start (with
    # logits_all) also serves the other roles, instead of a second server beside it.
    wanted = {
        *protocol.probability_roles,
        *(("judge",) if config.belief.per_round or config.belief.calibrated_ruling else ()),
        *(("scorer",) if reads_faithfulness(config) else ()),
    }
    specs = {role: probability_spec(config.role(role)) if role in wanted else config.role(role) for role in ROLES}
    llms: dict[str, LLM] = {}
    for role in sorted(ROLES, key=lambda r: not specs[r].logprobs):
        llms[role] = await make_llm(role, specs[role])
    index: CorpusIndex = services.index
    web: WebSearch = services.web_search(config)
    memory = services.memory
    if frozen is not None:  # a re-run: the stored run's evidence is all there is (no search, no memory of other claims)
        index, web, memory = FrozenIndex(frozen, services.embedder), filtered(FrozenWeb(frozen), source_policy(config.retrieval)), None
    if journal is not None:
        # The journal keeps what the search engine returned; the run's source policy stays the outer layer,
        # so the retrieval stage still reports what it refused.
        policy = source_policy(config.retrieval)
        raw_web = web.inner if isinstance(web, PolicyFilteredSearch) else web
        index, web = JournaledIndex(index, journal), filtered(JournaledWeb(raw_web, journal), policy)
    tools = Toolbox(index=index, web=web, embedder=services.embedder, memory=memory)
    turns: list[Turn] = []  # every argument, for the calibrated ruling's second reading of the contested exhibits

    def emit_keeping_turns(evt: Event) -> None:
        if isinstance(evt, TurnCompleted):
            turns.append(evt.turn)
        emit(evt)

    ctx = RunContext(run_id=run_id, claim=claim, config=config, llms=llms, tools=tools, emit=emit_keeping_turns, llm_factory=make_llm)
    ctx.calibration_dir = services.settings.data_dir  # the desk's own calibrations (python -m pipelines calibrate) before the shipped ones
    ctx.reserved_ids = reserved_evidence_ids(recorded)
    ctx.reviewer = make_reviewer(emit, gate, step_gate.recorded_reviews(recorded), next_id=ctx.next_evidence_id)
    reading = await ground(ctx)  # a debate grounded in desk's exhibits reads them first (belief.grounded)
    verdict = await protocol.runner()(ctx)
    verdict = await rule_beside(ctx, verdict, reading, turns)  # the calibrated ruling beside the protocol's own (belief.verdict)
    emit(VerdictReached(verdict=verdict))
    return verdict


def probability_spec(spec: ModelSpec) -> ModelSpec:
    """A role whose answers are read from token probabilities: on the embedded backend its server must keep them (logits_all)."""
    if spec.backend == "embedded" and not spec.logprobs:
        return spec.model_copy(update={"logprobs": True})
    return spec


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
    _launch(
        handle,
        services,
        attempt_events=[RunStarted(run_id=run_id, claim=claim.text, protocol=config.protocol, config=snapshot, by=by, source_run=source)],
        budget=Budget.for_run(config.budget, parent=batch_budget),
        frozen=frozen,
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
    config = RunConfig.from_snapshot(summary.config)
    if secrets_from is not None:
        config = config.model_copy(update={role: _with_credentials(config.role(role), secrets_from.role(role)) for role in ROLES})
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
    _launch(
        handle,
        services,
        attempt_events=[RunResumed(attempt=attempt, replayed=len(recorded), by=by)],
        recorded=recorded,
        answers=store.journal(run_id),
        claimed=True,
        budget=_budget_after(config.budget, recorded),
        frozen=frozen,
    )
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


def _launch(
    handle: RunHandle,
    services: Services,
    *,
    attempt_events: list[Event],
    recorded: Sequence[Event] = (),
    answers: dict[tuple[str, str], list[str]] | None = None,
    claimed: bool = False,
    budget: Budget | None = None,
    frozen: FrozenEvidence | None = None,
) -> None:
    """Start the run's thread; ``recorded`` and ``answers`` are a resumed run's stored events and journal (``claimed`` by it already)."""
    store = services.store
    run_id = handle.run_id
    redact = Redactor(handle.config.secrets())
    stream = StreamRedactor(redact.secrets, redact.text, redact.event)  # a key split across two chunks is caught whole
    dedupe = EventDeduper(recorded)
    writer = EventWriter(store, run_id, data_dir=services.settings.data_dir) if store is not None else None
    journal = Journal(writer, run_id, answers)
    journal.redact = redact.text
    emit_lock = threading.Lock()  # the stream redactor holds state; events come from the loop and from this thread

    def emit(evt: Event) -> None:
        with emit_lock:
            for safe in stream.feed(evt):
                _pass_on(safe)

    def flush_stream() -> None:
        with emit_lock:
            for safe in stream.flush():
                _pass_on(safe)

    def emit_step(evt: Event) -> None:
        # The protocol's emit: once the store stayed away past the writer's patience, the run stops at the next event
        # that ends a piece of work (not a streamed chunk, not a call's accounting, which precede its answer's journal entry).
        emit(evt)
        if writer is not None and writer.down is not None and not isinstance(evt, ModelCallCompleted | ArgumentDelta):
            raise StorePaused()

    def _pass_on(evt: Event) -> None:
        kept = dedupe.admit(evt)
        if kept is None:
            return
        if writer is not None:
            writer.put(kept)
        handle.push(kept)

    def worker() -> None:
        status = "failed"
        error: BaseException | None = None
        stop_beat = threading.Event()
        if store is not None:
            threading.Thread(target=_heartbeat, args=(store, run_id, stop_beat), name=f"beat-{run_id}", daemon=True).start()
        try:
            asyncio.run(
                execute(
                    handle.claim,
                    handle.config,
                    services,
                    emit_step,
                    run_id,
                    journal=journal,
                    gate=handle.gate,
                    recorded=recorded,
                    budget=budget,
                    frozen=frozen,
                )
            )
            if writer is not None:
                writer.flush()  # a store that failed to take an event fails the run, as when events were written inline
            status = "completed"
        except (StorePaused, StoreUnavailableError) as exc:  # the store stayed away: stopped between two steps, kept, resumable
            status = "interrupted"
            emit(RunInterrupted(reason=str(writer.down if writer is not None and writer.down is not None else exc)))
        except PauseFreedError as exc:  # the page went away: stopped at the pause, free for anyone to take over
            status = "interrupted"
            emit(RunInterrupted(reason=str(exc), paused_round=exc.round))
        except RunInterruptedError as exc:
            status = "interrupted"
            emit(RunInterrupted(reason=str(exc)))
        except BudgetExhaustedError as exc:  # stopped between two calls: what it did so far is kept, and it can be resumed
            status = "interrupted"
            emit(RunInterrupted(reason=f"{exc}; raise the limit on the Settings page to go on", budget=exc.stop))
        except DebateDeskError as exc:
            emit(RunFailed(reason=str(exc)))
        except Exception as exc:  # a bug: record it, then hand it to the caller to raise
            log.error("run %s crashed:\n%s", run_id, redact.text(traceback.format_exc()))
            emit(RunFailed(reason=f"internal error (please report): {type(exc).__name__}: {exc}"))
            error = exc
        finally:
            try:
                flush_stream()  # what a stream cut short held back (redacted) is kept, before the record closes
                stop_beat.set()
                if writer is not None:
                    writer.close()  # every event is stored (or spilled) before the run is marked finished and its stream ends
                    writer.finish(status)  # type: ignore[arg-type]
            finally:
                if store is not None:
                    store.release_run(run_id)
                handle.close(status, error)  # whatever the store did: the page and the CLI learn the run ended

    if store is not None and not claimed:
        store.claim_run(run_id)
    for evt in attempt_events:
        emit(evt)
    handle.thread = threading.Thread(target=worker, name=f"run-{run_id}", daemon=True)
    handle.thread.start()


def _heartbeat(store: RunStore, run_id: str, stop: threading.Event, every_s: float = 30.0) -> None:
    # A long model call emits nothing for minutes; the heartbeat tells other processes the run is alive.
    while not stop.wait(every_s):
        try:
            store.touch(run_id)
        except Exception as exc:  # the store away: the event writer waits for it and says so; the beat tries again later
            if not is_store_fault(exc):
                raise
            log.warning("run %s: heartbeat not stored: %s", run_id, fault_message(store.url, exc))


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
