"""The checker in the loop: step mode's pause after each round, the interventions, the verdict override.

A protocol calls ``ctx.review(round, next_queries)`` after a round (and with its ``plan`` after a
decomposition: proclaim's premises, mermaid's triplets, which the checker may rewrite). In step mode the
reviewer built here emits ``StepPaused`` and blocks the run's thread on a ``StepGate``
until the page submits the checker's ``Review`` (or the wait times out: the run is then
``interrupted`` and can be resumed). Each decision becomes an attributed, timestamped
event (``CheckerEditedQuery``, ``CheckerStruckEvidence``...), so the transcript, the
export and a resumed run all see the same interventions.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pipelines.core.domain import Evidence
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import (
    CheckerAddedEvidence,
    CheckerAddedQuery,
    CheckerAdmittedEvidence,
    CheckerEditedPlan,
    CheckerEditedQuery,
    CheckerStruckEvidence,
    Event,
    StepPaused,
    StepResumed,
    VerdictOverridden,
)
from pipelines.newsroom.access.roles import Person, acting_name
from pipelines.record.digest import digest
from pipelines.record.labels import checker_label
from pipelines.record.store import RunStore
from pipelines.run.context import OpeningPlan, Review, Reviewer

MAX_NOTE_CHARS = 2000
MAX_PASTED_CHARS = 20_000


PAGE_GONE_AFTER_S = 120.0  # a pause whose page has not been heard from for this long is freed (the tab was closed)


class RunInterruptedError(DebateDeskError):
    """The run stopped on purpose or for want of an answer (not a failure); it can be resumed from History."""


class PauseFreedError(RunInterruptedError):
    """The page that held a paused run went away: the run stops at its pause, free for anyone to take over from History."""

    def __init__(self, round: int, silent_s: float) -> None:
        super().__init__(
            f"paused at round {round}, free: the page that held the pause went away ({silent_s:.0f} s without a word from it); "
            "anyone may take it over from History"
        )
        self.round = round


@dataclass(frozen=True)
class PendingReview:
    """What the page shows while a run waits: the round just finished and the queries planned next."""

    round: int
    next_queries: dict[str, str]
    since: float = field(default_factory=time.time)
    plan: OpeningPlan | None = None  # after a decomposition: the plan the checker may rewrite


class StepGate:
    """The hand-off between a paused run (its own thread) and the page (Streamlit's script thread).

    ``wait`` blocks the run until ``submit`` (the page's callback) or ``abandon``; while
    it waits it calls ``heartbeat`` now and then, so the store knows the run is alive.
    """

    def __init__(
        self,
        timeout_s: float = 3600.0,
        heartbeat: Callable[[], None] | None = None,
        heartbeat_every_s: float = 30.0,
        page_gone_after_s: float | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.heartbeat = heartbeat
        self.heartbeat_every_s = heartbeat_every_s
        # With a page watching (``page_alive`` on each rerun and from a periodic fragment), a pause whose page is silent
        # this long is freed: the run stops at it (interrupted, resumable) instead of holding it for the whole timeout.
        self.page_gone_after_s = page_gone_after_s
        self._page_seen = time.monotonic()
        self._cond = threading.Condition()
        self._pending: PendingReview | None = None
        self._answer: tuple[Review, str, str] | None = None
        self._abandoned: str | None = None

    @property
    def pending(self) -> PendingReview | None:
        with self._cond:
            return self._pending

    def page_alive(self) -> None:
        """The page showing this run is still open (called on each rerun and by the paused page's periodic fragment)."""
        with self._cond:
            self._page_seen = time.monotonic()

    async def wait(self, round: int, next_queries: dict[str, str], plan: OpeningPlan | None = None) -> tuple[Review, str, str]:
        """Block until the checker decides; returns (review, by, note)."""
        with self._cond:
            self._pending = PendingReview(round=round, next_queries=dict(next_queries), plan=plan)
            self._answer = None
            self._page_seen = max(self._page_seen, time.monotonic() - (self.page_gone_after_s or 0) / 2)  # time to draw the form
            self._cond.notify_all()
        # A daemon thread, not asyncio.to_thread: the executor's threads are joined at interpreter exit,
        # so a pause nobody answers would keep the process (a stopped app, a test run) alive for the timeout.
        loop = asyncio.get_running_loop()
        decided: asyncio.Future[tuple[Review, str, str]] = loop.create_future()

        def settle(result: tuple[Review, str, str] | None, error: BaseException | None) -> None:
            if decided.done():
                return
            if error is not None:
                decided.set_exception(error)
            else:
                decided.set_result(result)  # type: ignore[arg-type]

        def block() -> None:
            try:
                result, error = self._block(), None
            except BaseException as exc:  # handed to the waiting coroutine
                result, error = None, exc
            with contextlib.suppress(RuntimeError):  # the run's loop is gone: nobody waits for this answer any more
                loop.call_soon_threadsafe(settle, result, error)

        threading.Thread(target=block, name="step-gate", daemon=True).start()
        return await decided

    def submit(self, review: Review, by: str, note: str = "") -> None:
        """The checker's decision for the round the run is paused on."""
        with self._cond:
            if self._pending is None:
                raise ValueError("the run is not waiting for a review (it went on or finished already)")
            self._answer = (review, by, note)
            self._pending = None
            self._cond.notify_all()

    def abandon(self, reason: str) -> None:
        """Stop a paused run without deciding (it is marked interrupted and can be resumed later)."""
        with self._cond:
            self._abandoned = reason
            self._cond.notify_all()

    def _block(self) -> tuple[Review, str, str]:
        deadline = time.monotonic() + self.timeout_s
        with self._cond:
            while self._answer is None:
                if self._abandoned is not None:
                    self._pending = None
                    raise RunInterruptedError(self._abandoned)
                left = deadline - time.monotonic()
                if left <= 0:
                    self._pending = None
                    raise RunInterruptedError(
                        f"no review came within {self.timeout_s / 60:.0f} minutes (was the tab closed?); resume the run from History"
                    )
                silent = time.monotonic() - self._page_seen
                if self.page_gone_after_s is not None and silent > self.page_gone_after_s and self._pending is not None:
                    round = self._pending.round
                    self._pending = None
                    raise PauseFreedError(round, silent)
                every = (
                    self.heartbeat_every_s if self.page_gone_after_s is None else min(self.heartbeat_every_s, self.page_gone_after_s / 4)
                )
                self._cond.wait(timeout=min(left, every))
                if self._answer is None and self.heartbeat is not None:
                    self.heartbeat()
            answer = self._answer
            self._answer = None
            return answer


def intervention_events(
    round: int, planned: dict[str, str], review: Review, by: str, note: str = "", plan: OpeningPlan | None = None
) -> list[Event]:
    """The events that record a checker's review of one round (an unchanged query, or plan, is not an edit)."""
    events: list[Event] = []
    if plan is not None and review.plan is not None and review.plan != plan.items:
        events.append(CheckerEditedPlan(round=round, kind=plan.kind, before=plan.items, after=review.plan, by=by))
    for agent, query in review.queries.items():
        before = planned.get(agent, "")
        if query.strip() and query != before:
            events.append(CheckerEditedQuery(round=round, agent=agent, before=before, after=query, by=by))
    events.extend(CheckerAddedQuery(round=round, query=q, by=by) for q in review.extra_queries if q.strip())
    events.extend(CheckerStruckEvidence(round=round, evidence_id=eid, reason=reason, by=by) for eid, reason in review.struck.items())
    events.extend(CheckerAdmittedEvidence(round=round, evidence_id=eid, reason=reason, by=by) for eid, reason in review.admitted.items())
    events.extend(CheckerAddedEvidence(round=round, evidence=e, by=by) for e in review.added)
    events.append(StepResumed(round=round, action="stop" if review.stop else "continue", by=by, note=note))
    return events


def recorded_reviews(events: Iterable[Event]) -> dict[int, tuple[Review, str, str]]:
    """The checker's decisions per round, rebuilt from the intervention events: (review, by, note).

    Only rounds the checker finished (a StepResumed) count; a half-recorded review is asked again.
    """
    parts: dict[int, dict[str, Any]] = {}

    def part(round_: int) -> dict[str, Any]:
        return parts.setdefault(round_, {"queries": {}, "extra": [], "struck": {}, "admitted": {}, "added": [], "plan": None})

    done: dict[int, StepResumed] = {}
    for evt in events:
        match evt:
            case CheckerEditedPlan(round=r, after=after):
                part(r)["plan"] = after
            case CheckerEditedQuery(round=r, agent=agent, after=after):
                part(r)["queries"][agent] = after
            case CheckerAddedQuery(round=r, query=query):
                part(r)["extra"].append(query)
            case CheckerStruckEvidence(round=r, evidence_id=eid, reason=reason):
                part(r)["struck"][eid] = reason
            case CheckerAdmittedEvidence(round=r, evidence_id=eid, reason=reason):
                part(r)["admitted"][eid] = reason
            case CheckerAddedEvidence(round=r, evidence=evidence):
                part(r)["added"].append(evidence)
            case StepResumed(round=r):
                done[r] = evt
            case _:
                pass
    reviews: dict[int, tuple[Review, str, str]] = {}
    for r, resumed in done.items():
        p = part(r)
        added: list[Evidence] = p["added"]
        review = Review(
            queries=p["queries"],
            extra_queries=tuple(p["extra"]),
            struck=p["struck"],
            admitted=p["admitted"],
            added=tuple(added),
            stop=resumed.action == "stop",
            plan=p["plan"],
        )
        reviews[r] = (review, resumed.by, resumed.note)
    return reviews


def clean_review(review: Review, planned: dict[str, str], plan: OpeningPlan | None = None) -> Review:
    """Drop what changes nothing: unchanged or blank queries, blank extra queries, blank plan lines, an unchanged or emptied plan."""
    queries = {a: q.strip() for a, q in review.queries.items() if q.strip() and q.strip() != planned.get(a, "")}
    extra = tuple(q.strip() for q in review.extra_queries if q.strip())
    items = tuple(" ".join(i.split()) for i in review.plan or () if i.strip())
    kept = items if plan is not None and items and items != plan.items else None
    return replace(review, queries=queries, extra_queries=extra, plan=kept)


def make_reviewer(
    emit: Callable[[Event], None],
    gate: StepGate | None,
    recorded: dict[int, tuple[Review, str, str]] | None = None,
    next_id: Callable[[str], str] | None = None,
) -> Reviewer | None:
    """The ``ctx.reviewer`` for a run: pauses on ``gate``; rounds reviewed before a resume are answered from the record.

    Pasted evidence gets the run's next evidence id (``E7``), so agents cite it like any other item.
    """
    recorded = recorded or {}
    if gate is None and not recorded:
        return None

    async def reviewer(round: int, next_queries: dict[str, str], plan: OpeningPlan | None = None, /) -> Review:
        paused = StepPaused(
            round=round, next_queries=dict(next_queries), plan_kind=plan.kind if plan else "", plan=plan.items if plan else ()
        )
        if round in recorded:
            review, by, note = recorded[round]
        elif gate is None:
            return Review()
        else:
            emit(paused)
            review, by, note = await gate.wait(round, next_queries, plan)
            review = clean_review(review, next_queries, plan)
            if next_id is not None and review.added:
                review = replace(
                    review, added=tuple(e.model_copy(update={"id": next_id(f"user:{round}:{i}")}) for i, e in enumerate(review.added))
                )
        if round in recorded:
            emit(paused)
        for evt in intervention_events(round, next_queries, review, by, note, plan):
            emit(evt)
        return review

    return reviewer


def pasted_evidence(evidence_id: str, text: str, *, title: str = "", url: str | None = None, round: int = 0, by: str = "") -> Evidence:
    """Evidence a checker pasted or had fetched, ready for ``Review.added``; raises ValueError when empty."""
    body = " ".join(text.split())
    if not body:
        raise ValueError("the pasted evidence is empty: paste some text or a URL to fetch")
    if len(body) > MAX_PASTED_CHARS:
        body = body[: MAX_PASTED_CHARS - 3] + "..."
    return Evidence(
        id=evidence_id,
        source="user",
        text=body,
        title=" ".join(title.split())[:200] or "Pasted by the checker",
        url=url,
        round=round,
        found_by=f"checker {by}".strip(),
        query="",
    )


def override_verdict(store: RunStore, run_id: str, label: str, note: str, by: Person | str) -> VerdictOverridden:
    """Record the person's final verdict beside the model's (kept in the same event); returns the event.

    On a shared desk only an editor overrides: a Person's role is read again now (NotAllowedError otherwise).
    ``note`` is the reason, and it is required: a verdict a reader cannot trace to a reason is not a fact-check.
    """
    name = acting_name(by, "override")
    if not label.strip():
        raise ValueError("choose the verdict to record")
    label = checker_label(label)  # SUPPORTED, REFUTED or NOT ENOUGH INFO; a protocol's own word is read as its common one
    if not name:
        raise ValueError("say who overrides the verdict (your name or initials), for the audit trail")
    if not note.strip():
        raise ValueError("give a reason for your verdict (what you found, where): an override without one is not recorded")
    if len(note) > MAX_NOTE_CHARS:
        raise ValueError(f"the note is {len(note):,} characters; keep it under {MAX_NOTE_CHARS:,}")
    if store.get_run(run_id) is None:
        raise ValueError(f"no run {run_id!r} in the store")
    model = digest(store.events(run_id)).verdict
    event = VerdictOverridden(model_verdict=model, label=label, note=note.strip(), by=name)
    store.append(run_id, event)
    return event
