"""The claims queue: claims a desk has to check, where each appeared, who has it, by when, how far it has got.

A claim moves new -> checking -> in review -> published, or is dismissed on the way (and can be
reopened). Runs link to it (a run started from it, or on its exact text), people comment on it,
an editor reviews it (the verdict the desk stands by, with the reason) and publishes it.
Every change is one transaction that writes the claim and its audit entry (who, when, what)
together, so the history of a claim is never short of a change it shows.

Who acts is an argument (``User``: name and desk role), decided by the caller from the sign-in,
never read from a form; the editor-only actions check the role here, where they happen.
The tables live in the run store's database (SQLite or PostgreSQL) beside ``runs``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal, get_args

from sqlalchemy import ColumnElement, Engine, func, or_, select, update
from sqlalchemy.orm import InstrumentedAttribute, Session

from pipelines.core.database.rows import from_columns
from pipelines.core.database.tables import MAX_FIELD, CommentRow, PublicationRow, QueueChangeRow, QueueClaimRow, QueueRunRow, RunRow
from pipelines.core.errors import DebateDeskError, InvalidClaimError
from pipelines.core.text.language import checked_code
from pipelines.core.text.language import detect as detect_language
from pipelines.core.text.safety import unsafe_char
from pipelines.newsroom.access.roles import NotAllowedError, require_role
from pipelines.newsroom.access.users import User
from pipelines.record.comments import MAX_COMMENT, Comment, CommentRefusedError, check_comment
from pipelines.record.verdict_card import COMMON_LABELS, CardLabel, common_label
from pipelines.run.runner import validate_claim

ClaimStatus = Literal["new", "checking", "in review", "published", "dismissed"]
CLAIM_STATUSES: tuple[ClaimStatus, ...] = get_args(ClaimStatus)
CLOSED_STATUSES: tuple[ClaimStatus, ...] = ("published", "dismissed")  # no more checking or review until reopened
# Where a claim may go from each status by a plain status change (publishing and unpublishing have their own actions).
NEXT_STATUSES: dict[str, tuple[ClaimStatus, ...]] = {
    "new": ("checking", "dismissed"),
    "checking": ("new", "in review", "dismissed"),
    "in review": ("checking", "dismissed"),
    "published": (),
    "dismissed": ("new",),
}
MAX_URL = 2000
MAX_TAGS = 20
MAX_REASON = 5000


class QueueError(DebateDeskError, ValueError):
    """A queue action that cannot be done as asked; the message says why and what to do."""


QUEUE_TABLES = [row.__tablename__ for row in (QueueClaimRow, QueueRunRow, QueueChangeRow, PublicationRow, CommentRow)]
PUBLISH_ACTIONS = ("published", "corrected", "confirmed", "withdrawn")


@dataclass(frozen=True)
class Appearance:
    """Where and when a claim appeared, and who made it (each may be unknown)."""

    url: str = ""
    on: str = ""  # YYYY-MM-DD
    claimant: str = ""


@dataclass(frozen=True)
class QueueClaim:
    id: str
    text: str
    appearance: Appearance
    status: ClaimStatus
    assignee: str
    due_on: str
    tags: tuple[str, ...]
    created_at: float
    created_by: str
    updated_at: float
    reviewed_verdict: CardLabel | None = None
    review_reason: str = ""
    reviewed_by: str = ""
    reviewed_at: float | None = None
    reviewed_run: str = ""
    published_at: float | None = None
    published_by: str = ""
    claimreview: dict[str, Any] | None = None
    publish_version: int = 0
    first_published_at: float | None = None
    record_seen_at: float | None = None
    withdrawn: dict[str, Any] | None = None
    language: str = ""
    repeats: str = ""  # "claim:ID" or "review:ID": the earlier fact-check this claim repeats (its verdict a proposal only)
    repeats_score: float | None = None

    @property
    def reviewed(self) -> bool:
        return self.reviewed_verdict is not None


@dataclass(frozen=True)
class Publication:
    """One version of a claim's public address: who published, corrected, confirmed or withdrew it, when, why, and what it served."""

    version: int
    at: float
    by: str
    action: str
    note: str
    document: dict[str, Any] | None


@dataclass(frozen=True)
class QueueChange:
    """One entry of a claim's history: when, who, the action, and what it changed."""

    at: float
    by: str
    action: str
    detail: dict[str, Any]

    def describe(self) -> str:
        """The change in one plain line (not escaped)."""
        parts = []
        for key, value in self.detail.items():
            if isinstance(value, list) and len(value) == 2:
                parts.append(f"{key}: {_shown(value[0])} → {_shown(value[1])}")
            else:
                parts.append(f"{key}: {_shown(value)}")
        return self.action + (f" ({'; '.join(parts)})" if parts else "")


@dataclass(frozen=True)
class QueueFilter:
    """What the queue page filters on; empty fields match everything."""

    text: str = ""  # in the claim, the claimant or the address where it appeared
    statuses: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()  # "" stands for nobody
    tags: tuple[str, ...] = ()  # a claim with any of them
    due_by: str = ""  # due on or before this day (YYYY-MM-DD)
    claimant: str = ""
    languages: tuple[str, ...] = ()  # "" stands for not told


@dataclass(frozen=True)
class NewClaim:
    """A claim to add, as typed or read from a file."""

    text: str
    appearance: Appearance = field(default_factory=Appearance)
    assignee: str = ""
    due_on: str = ""
    tags: tuple[str, ...] = ()
    language: str = ""  # ISO 639; "" has it told from the text (pipelines/core/text/language.py)


class ClaimQueue:
    """The desk's claims queue in the run store's database; one instance can be shared by threads."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine  # an opened RunStore's: its migrations build the queue's tables

    # --- claims ------------------------------------------------------------------------

    def add(self, claim: NewClaim, by: User) -> QueueClaim:
        checked = checked_new(claim)
        now = time.time()
        claim_id = uuid.uuid4().hex[:12]
        with Session(self.engine) as s, s.begin():
            s.add(
                QueueClaimRow(
                    id=claim_id,
                    text=checked.text,
                    source_url=checked.appearance.url or None,
                    appeared_on=checked.appearance.on or None,
                    claimant=checked.appearance.claimant or None,
                    status="new",
                    assignee=checked.assignee or None,
                    due_on=checked.due_on or None,
                    tags=_tags_column(checked.tags),
                    created_at=now,
                    created_by=name_of(by),
                    updated_at=now,
                    language=checked.language or None,
                )
            )
            s.flush()
            detail = {k: v for k, v in _fields_of(checked).items() if v}
            s.add(_change(claim_id, by, "added", detail, now))
        return self._get(claim_id)

    def add_many(self, claims: Sequence[NewClaim], by: User) -> list[QueueClaim]:
        """Every claim checked first: one bad row adds none, and the message names it."""
        checked = []
        for number, claim in enumerate(claims, 1):
            try:
                checked.append(checked_new(claim))
            except QueueError as exc:
                raise QueueError(f"claim {number}: {exc}") from None
        return [self.add(c, by) for c in checked]

    def get(self, claim_id: str) -> QueueClaim | None:
        with Session(self.engine) as s:
            row = s.get(QueueClaimRow, claim_id)
            return _claim(row) if row else None

    def _get(self, claim_id: str) -> QueueClaim:
        found = self.get(claim_id)
        if found is None:
            raise QueueError(f"no claim {claim_id!r} in the queue; it may have been removed, or the link is wrong")
        return found

    def find(self, where: QueueFilter | None = None, limit: int = 500) -> list[QueueClaim]:
        """Newest first; the due ones first among equals would hide new ones, so the page sorts as it shows."""
        where = where or QueueFilter()
        query = select(QueueClaimRow)
        if where.text.strip():
            needle = where.text.strip()
            query = query.where(
                or_(
                    QueueClaimRow.text.icontains(needle, autoescape=True),
                    QueueClaimRow.claimant.icontains(needle, autoescape=True),
                    QueueClaimRow.source_url.icontains(needle, autoescape=True),
                )
            )
        if where.statuses:
            query = query.where(QueueClaimRow.status.in_(where.statuses))
        if where.assignees:
            query = query.where(_one_of(QueueClaimRow.assignee, where.assignees))
        if where.tags:
            query = query.where(or_(*(QueueClaimRow.tags.contains(f",{_tag(t)},", autoescape=True) for t in where.tags)))
        if where.due_by:
            query = query.where(QueueClaimRow.due_on.is_not(None), QueueClaimRow.due_on <= _day(where.due_by, "due by"))
        if where.claimant.strip():
            query = query.where(QueueClaimRow.claimant.icontains(where.claimant.strip(), autoescape=True))
        if where.languages:
            query = query.where(_one_of(QueueClaimRow.language, where.languages))
        with Session(self.engine) as s:
            rows = s.scalars(query.order_by(QueueClaimRow.created_at.desc(), QueueClaimRow.id).limit(limit)).all()
            return [_claim(r) for r in rows]

    def facets(self) -> dict[str, list[str]]:
        """The assignees, tags, claimants and languages present, for filter widgets."""
        with Session(self.engine) as s:
            assignees = sorted(a for a in s.scalars(select(QueueClaimRow.assignee).distinct()).all() if a)
            claimants = sorted(c for c in s.scalars(select(QueueClaimRow.claimant).distinct()).all() if c)
            tags = sorted({t for column in s.scalars(select(QueueClaimRow.tags).distinct()).all() for t in _tags_of(column)})
            languages = sorted(code for code in s.scalars(select(QueueClaimRow.language).distinct()).all() if code)
        return {"assignees": assignees, "tags": tags, "claimants": claimants, "languages": languages}

    def update(
        self,
        claim_id: str,
        by: User,
        *,
        appearance: Appearance | None = None,
        assignee: str | None = None,
        due_on: str | None = None,
        tags: Iterable[str] | None = None,
        language: str | None = None,
    ) -> QueueClaim:
        """Change where it appeared, who has it, when it is due, its tags or its language; only what differs is recorded."""
        changes: dict[str, Any] = {}
        if appearance is not None:
            checked = _checked_appearance(appearance)
            changes.update(source_url=checked.url or None, appeared_on=checked.on or None, claimant=checked.claimant or None)
        if assignee is not None:
            changes["assignee"] = _text_field(assignee, "assignee") or None
        if due_on is not None:
            changes["due_on"] = _day(due_on, "due date") if due_on.strip() else None
        if tags is not None:
            changes["tags"] = _tags_column(_checked_tags(tags))
        if language is not None:
            changes["language"] = _language(language) or None
        return self._change_fields(claim_id, by, changes, "changed")

    def set_repeats(self, claim_id: str, by: User, repeats: str, score: float | None) -> QueueClaim:
        """Join the claim to the earlier fact-check it repeats (``claim:ID`` or ``review:ID``), or "" to part them; recorded.
        The earlier verdict is a proposal shown beside the claim, never this claim's review or rating."""
        if repeats and not re.fullmatch(r"(claim|review):[A-Za-z0-9_-]{1,40}", repeats):
            raise QueueError(f"{repeats[:60]!r} is not an earlier fact-check (claim:ID or review:ID)")
        if repeats == f"claim:{claim_id}":
            raise QueueError("a claim cannot repeat itself")
        changes = {"repeats": repeats or None, "repeats_score": round(score, 4) if repeats and score is not None else None}
        return self._change_fields(claim_id, by, changes, "joined" if repeats else "parted")

    def set_status(self, claim_id: str, status: str, by: User) -> QueueClaim:
        """A plain status change (new, checking, in review, dismissed); publishing is ``publish``."""
        if status not in CLAIM_STATUSES:
            raise QueueError(f"unknown status {status!r}; choose one of: {', '.join(CLAIM_STATUSES)}")
        current = self._get(claim_id)
        if status == current.status:
            return current
        if status not in NEXT_STATUSES[current.status]:
            if current.status == "published":
                raise QueueError("a published claim changes only by unpublishing it (an editor does that)")
            if status == "published":
                raise QueueError("a claim is published by an editor's Publish, after a review")
            allowed = ", ".join(NEXT_STATUSES[current.status]) or "nothing"
            raise QueueError(f"a claim that is {current.status} can go to: {allowed}; not {status}")
        return self._change_fields(claim_id, by, {"status": status}, "status", expect_status=current.status)

    def _change_fields(self, claim_id: str, by: User, changes: dict[str, Any], action: str, expect_status: str | None = None) -> QueueClaim:
        now = time.time()
        with Session(self.engine) as s, s.begin():
            row = s.get(QueueClaimRow, claim_id, with_for_update=True)
            if row is None:
                raise QueueError(f"no claim {claim_id!r} in the queue")
            if expect_status is not None and row.status != expect_status:
                raise QueueError(f"someone else changed this claim meanwhile (it is now {row.status}); look again and retry")
            detail = {}
            for name, value in changes.items():
                before = getattr(row, name)
                if before != value:
                    detail[_FIELD_NAMES.get(name, name)] = [_public(name, before), _public(name, value)]
                    setattr(row, name, value)
            if not detail:
                return _claim(row)
            row.updated_at = now
            s.add(_change(claim_id, by, action, detail, now))
            s.flush()
            return _claim(row)

    def history(self, claim_id: str) -> list[QueueChange]:
        with Session(self.engine) as s:
            rows = s.scalars(select(QueueChangeRow).where(QueueChangeRow.claim_id == claim_id).order_by(QueueChangeRow.id)).all()
            return [QueueChange(r.at, r.by, r.action, json.loads(r.detail or "{}")) for r in rows]

    # --- runs --------------------------------------------------------------------------

    def link_run(
        self, run_id: str, claim_text: str, by: User, *, claim_id: str | None = None, details: NewClaim | None = None
    ) -> QueueClaim:
        """Link a run to the claim it was started from (``claim_id``), else to the queued claim of the same text, else to a new claim
        (with ``details``, where it appeared and the rest, when a batch file gave them).

        A new claim gets a run at once, so it starts as checking; a new or dismissed claim a run joins goes to checking too.
        A run already linked stays with its claim.
        """
        with Session(self.engine) as s:
            linked = s.scalar(select(QueueRunRow.claim_id).where(QueueRunRow.run_id == run_id))
        if linked is not None:
            return self._get(linked)
        if claim_id is None:
            text = " ".join(claim_text.split())
            with Session(self.engine) as s:
                claim_id = s.scalar(
                    select(QueueClaimRow.id)
                    .where(QueueClaimRow.text == text, QueueClaimRow.status != "published")
                    .order_by(QueueClaimRow.created_at.desc())
                    .limit(1)
                )
        if claim_id is None:
            claim_id = self.add(replace(details, text=claim_text) if details else NewClaim(text=claim_text), by).id
        now = time.time()
        with Session(self.engine) as s, s.begin():
            row = s.get(QueueClaimRow, claim_id, with_for_update=True)
            if row is None:
                raise QueueError(f"no claim {claim_id!r} in the queue")
            s.add(QueueRunRow(run_id=run_id, claim_id=claim_id, linked_at=now, linked_by=name_of(by)))
            detail: dict[str, Any] = {"run": run_id}
            if row.status in ("new", "dismissed"):
                detail["status"] = [row.status, "checking"]
                row.status = "checking"
            row.updated_at = now
            s.add(_change(claim_id, by, "run linked", detail, now))
        return self._get(claim_id)

    def runs_of(self, claim_id: str) -> list[str]:
        """The claim's runs, oldest first."""
        with Session(self.engine) as s:
            return list(s.scalars(select(QueueRunRow.run_id).where(QueueRunRow.claim_id == claim_id).order_by(QueueRunRow.linked_at)).all())

    def claim_of_run(self, run_id: str) -> QueueClaim | None:
        with Session(self.engine) as s:
            claim_id = s.scalar(select(QueueRunRow.claim_id).where(QueueRunRow.run_id == run_id))
        return self.get(claim_id) if claim_id else None

    # --- comments ----------------------------------------------------------------------

    def comment(
        self, by: User, text: str, *, claim_id: str | None = None, run_id: str | None = None, evidence_id: str | None = None
    ) -> Comment:
        """A comment on a claim, a run, or one exhibit of a run (``run_id`` and ``evidence_id``); anyone on the desk may comment.
        Refused plainly: nothing visible, a control character, a run or an exhibit this desk does not hold (``check_comment``)."""
        try:
            check_comment(self.engine, text, run_id=run_id, evidence_id=evidence_id)
        except CommentRefusedError as exc:
            raise QueueError(str(exc)) from None
        body = _prose(text, "comment", MAX_COMMENT, "the comment is empty; write something first")
        if evidence_id and not run_id:
            raise QueueError("a comment on an exhibit needs the run the exhibit belongs to")
        if not (claim_id or run_id):
            raise QueueError("a comment is on a claim or a run")
        now = time.time()
        with Session(self.engine) as s, s.begin():
            if claim_id is not None and s.get(QueueClaimRow, claim_id) is None:
                raise QueueError(f"no claim {claim_id!r} in the queue")
            row = CommentRow(claim_id=claim_id, run_id=run_id, evidence_id=evidence_id or None, author=name_of(by), at=now, text=body)
            s.add(row)
            s.flush()
            if claim_id is not None:
                s.add(_change(claim_id, by, "commented", {"comment": body[:120] + ("…" if len(body) > 120 else "")}, now))
            return from_columns(Comment, row)

    def comments_on_claim(self, claim_id: str) -> list[Comment]:
        """The comments on the claim itself, oldest first."""
        with Session(self.engine) as s:
            query = select(CommentRow).where(CommentRow.claim_id == claim_id, CommentRow.run_id.is_(None)).order_by(CommentRow.id)
            return [from_columns(Comment, r) for r in s.scalars(query).all()]

    def comments_on_run(self, run_id: str) -> list[Comment]:
        """The comments on a run and on its exhibits, oldest first."""
        with Session(self.engine) as s:
            return [
                from_columns(Comment, r)
                for r in s.scalars(select(CommentRow).where(CommentRow.run_id == run_id).order_by(CommentRow.id)).all()
            ]

    # --- review and publishing ---------------------------------------------------------

    def review(self, claim_id: str, by: User, verdict: str, reason: str, *, run_id: str | None = None) -> QueueClaim:
        """An editor records the verdict the desk stands by (SUPPORTED, REFUTED or NOT ENOUGH INFO) and why; the claim is then in review.

        The claim must have been checked: at least one of its runs (``run_id``, else its latest) reached a verdict.
        """
        require_role(by, "review")
        label = " ".join(verdict.split()).upper()
        if label not in COMMON_LABELS:
            raise QueueError(f"the reviewed verdict is one of {', '.join(COMMON_LABELS)}, not {verdict!r}")
        why = _prose(reason, "reason", MAX_REASON, "say why: the reason is published as the fact-check's explanation")
        current = self._get(claim_id)
        if current.status == "dismissed":
            raise QueueError("the claim is dismissed; reopen it first")
        runs = self.runs_of(claim_id)
        if run_id is not None and run_id not in runs:
            raise QueueError(f"run {run_id} is not one of this claim's runs")
        if not runs:
            raise QueueError("no run has checked this claim yet; check it first (Verify, or Batch)")
        changes: dict[str, Any] = {
            "reviewed_verdict": label,
            "review_reason": why,
            "reviewed_by": name_of(by),
            "reviewed_at": time.time(),
            "reviewed_run": run_id or runs[-1],
        }
        if current.status != "published":  # a published claim stays published: the new review is flagged until corrected or confirmed
            changes["status"] = "in review"
        return self._change_fields(claim_id, by, changes, "reviewed", expect_status=current.status)

    def mark_published(
        self, claim_id: str, by: User, claimreview: dict[str, Any], *, expect_version: int, without: Sequence[str] = ()
    ) -> QueueClaim:
        """Store the ClaimReview an editor published (``pipelines.newsroom.publishing`` builds it); the address serves it from here.

        ``expect_version`` is the claim's ``publish_version`` the editor decided on: if another editor published, corrected
        or unpublished it meanwhile, nothing changes and the message says who did what.
        """
        require_role(by, "publish")
        return self._publication_step(
            claim_id,
            by,
            expect_version,
            action="published",
            document=claimreview,
            note="",
            where=(QueueClaimRow.status == "in review", QueueClaimRow.reviewed_verdict.is_not(None)),
            values={"status": "published", "claimreview": json.dumps(claimreview), "withdrawn": None},
            detail={"status": ["in review", "published"], "url": claimreview.get("url", "")}
            | ({"published without": ", ".join(without)} if without else {}),  # the editor confirmed it, recorded
            refused="only a reviewed claim in review can be published; review it first",
        )

    def mark_corrected(self, claim_id: str, by: User, claimreview: dict[str, Any], note: str, *, expect_version: int) -> QueueClaim:
        """Store a correction of a published claim: the address serves the corrected ClaimReview; the version before stays listed."""
        require_role(by, "publish")
        return self._publication_step(
            claim_id,
            by,
            expect_version,
            action="corrected",
            document=claimreview,
            note=note,
            where=(QueueClaimRow.status == "published",),
            values={"claimreview": json.dumps(claimreview)},
            detail={"correction": note},
            refused="only a published claim can be corrected",
        )

    def confirm_published(self, claim_id: str, by: User, note: str = "", *, expect_version: int) -> QueueClaim:
        """An editor looked at what changed in the record since publication and stands by the published rating: recorded, unflagged."""
        require_role(by, "publish")
        why = _prose(note, "note", MAX_REASON, "") if note.strip() else ""
        return self._publication_step(
            claim_id,
            by,
            expect_version,
            action="confirmed",
            document=None,
            note=why,
            where=(QueueClaimRow.status == "published",),
            values={},
            detail={"confirmed": why or "the published rating stands"},
            refused="only a published claim can be confirmed",
        )

    def mark_unpublished(self, claim_id: str, by: User, reason: str = "", *, withdrawn: dict[str, Any], expect_version: int) -> QueueClaim:
        """Take a published claim back to in review; its address serves ``withdrawn`` (a plain notice) from then, never nothing.
        Every version it served, and its audit entries, stay."""
        require_role(by, "publish")
        why = reason.strip()[:MAX_REASON]
        detail: dict[str, Any] = {"status": ["published", "in review"]}
        if why:
            detail["reason"] = why
        return self._publication_step(
            claim_id,
            by,
            expect_version,
            action="withdrawn",
            document=withdrawn,
            note=why,
            where=(QueueClaimRow.status == "published",),
            values={
                "status": "in review",
                "published_at": None,
                "published_by": None,
                "claimreview": None,
                "withdrawn": json.dumps(withdrawn),
            },
            detail=detail,
            refused="the claim is not published",
            action_name="unpublished",
        )

    def _publication_step(
        self,
        claim_id: str,
        by: User,
        expect_version: int,
        *,
        action: str,
        document: dict[str, Any] | None,
        note: str,
        where: tuple[Any, ...],
        values: dict[str, Any],
        detail: dict[str, Any],
        refused: str,
        action_name: str = "",
    ) -> QueueClaim:
        """One publishing action as one transaction: a compare-and-set on ``publish_version`` with the claim's row, its version
        kept, its audit entry. Two editors at once: the second finds the version moved and is told by whom."""
        now = time.time()
        name = name_of(by)
        values = dict(values, publish_version=expect_version + 1, updated_at=now)
        if action in ("published", "corrected", "confirmed"):
            values["record_seen_at"] = now  # what the record held now is what the editor published or stood by
        if action == "published":
            values.update(published_at=now, published_by=name, first_published_at=func.coalesce(QueueClaimRow.first_published_at, now))
        with Session(self.engine) as s, s.begin():
            done = s.execute(
                update(QueueClaimRow)
                .where(QueueClaimRow.id == claim_id, func.coalesce(QueueClaimRow.publish_version, 0) == expect_version, *where)
                .values(**values)
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                s.rollback()
                raise QueueError(self.why_refused(claim_id, expect_version, refused))
            s.add(
                PublicationRow(
                    claim_id=claim_id,
                    version=expect_version + 1,
                    at=now,
                    by=name,
                    action=action,
                    note=note,
                    document=json.dumps(document) if document is not None else None,
                )
            )
            s.add(_change(claim_id, by, action_name or action, detail, now))
        return self._get(claim_id)

    def why_refused(self, claim_id: str, expect_version: int, refused: str) -> str:
        """Why a publishing action decided on ``expect_version`` was not applied: who acted on the claim since, else ``refused``."""
        claim = self.get(claim_id)
        if claim is None:
            return f"no claim {claim_id!r} in the queue"
        if claim.publish_version != expect_version:
            last = self.publications(claim_id)
            if last:
                step = last[-1]
                return (
                    f"{step.by} {step.action} this claim meanwhile (it is now {claim.status}); nothing you did was applied. "
                    "Look at it again before you act."
                )
            return f"someone changed this claim meanwhile (it is now {claim.status}); look at it again before you act"
        return f"{refused} (it is {claim.status})"

    def reviews(self) -> list[tuple[str, str, str, float]]:
        """Every claim an editor reviewed: (claim text, reviewed verdict, the run it rests on, when), oldest first; what the
        calibration learns from beside History's overrides."""
        query = (
            select(QueueClaimRow.text, QueueClaimRow.reviewed_verdict, QueueClaimRow.reviewed_run, QueueClaimRow.reviewed_at)
            .where(QueueClaimRow.reviewed_verdict.is_not(None), QueueClaimRow.reviewed_run.is_not(None))
            .order_by(QueueClaimRow.reviewed_at)
        )
        with Session(self.engine) as s:
            return [(str(t), str(v), str(r), float(a or 0.0)) for t, v, r, a in s.execute(query).all()]

    def publications(self, claim_id: str) -> list[Publication]:
        """Every version of the claim's public address, oldest first: each stays readable here."""
        with Session(self.engine) as s:
            rows = s.scalars(select(PublicationRow).where(PublicationRow.claim_id == claim_id).order_by(PublicationRow.version)).all()
            return [Publication(r.version, r.at, r.by, r.action, r.note, json.loads(r.document) if r.document else None) for r in rows]

    def served(self, claim_id: str) -> dict[str, Any] | None:
        """What the claim's public address serves now, read from the database: the ClaimReview while it is published, the
        withdrawal notice once unpublished, else None (never published)."""
        with Session(self.engine) as s:
            row = s.execute(
                select(QueueClaimRow.status, QueueClaimRow.claimreview, QueueClaimRow.withdrawn).where(QueueClaimRow.id == claim_id)
            ).first()
        if row is None:
            return None
        status, claimreview, withdrawn = row
        if status == "published" and claimreview:
            return dict(json.loads(claimreview))
        return dict(json.loads(withdrawn)) if withdrawn else None

    def last_runs(self, claims: Sequence[QueueClaim]) -> dict[str, str]:
        """For each claim with a run, its newest run in a few words: the verdict it ended on (a checker's over the model's,
        in the card's words), else how it stands ("running", "failed", "interrupted"). Not escaped."""
        if not claims:
            return {}
        with Session(self.engine) as s:
            rows = s.execute(
                select(QueueRunRow.claim_id, RunRow.status, RunRow.verdict, RunRow.checker_verdict)
                .join(RunRow, RunRow.id == QueueRunRow.run_id)
                .where(QueueRunRow.claim_id.in_([c.id for c in claims]))
                .order_by(QueueRunRow.linked_at)
            ).all()
        last: dict[str, str] = {}
        for claim_id, status, verdict, checker_verdict in rows:  # oldest first: the newest stays
            final = checker_verdict or verdict
            last[claim_id] = common_label(final) if final and status != "running" else status
        return last

    def record_changes(self, claims: Sequence[QueueClaim]) -> dict[str, list[str]]:
        """For each published claim, what changed in its record since it was published, corrected or confirmed (plain lines,
        not escaped): a run joined it, one of its runs had its verdict overridden, or it was reviewed again. Empty: nothing."""
        published = {c.id: c for c in claims if c.status == "published"}
        changes: dict[str, list[str]] = {cid: [] for cid in published}
        if not published:
            return changes
        with Session(self.engine) as s:
            rows = s.execute(
                select(
                    QueueRunRow.claim_id,
                    QueueRunRow.run_id,
                    QueueRunRow.linked_at,
                    RunRow.verdict,
                    RunRow.checker_verdict,
                    RunRow.checker_by,
                    RunRow.checker_at,
                    RunRow.checker_note,
                )
                .join(RunRow, RunRow.id == QueueRunRow.run_id, isouter=True)
                .where(QueueRunRow.claim_id.in_(list(published)))
                .order_by(QueueRunRow.linked_at)
            ).all()
        for claim_id, run_id, linked_at, verdict, checker_verdict, checker_by, checker_at, checker_note in rows:
            seen = _seen(published[claim_id])
            if linked_at > seen:
                final = checker_verdict or verdict
                said = common_label(final) if final else "no verdict yet"
                changes[claim_id].append(f"run {run_id} joined the claim ({said})")
            if checker_at is not None and checker_at > seen and checker_verdict:
                note = " ".join((checker_note or "").split())
                changes[claim_id].append(
                    f"run {run_id}'s verdict was overridden to {common_label(checker_verdict)} by {checker_by or 'someone'}"
                    + (f": {note[:200]}" if note else "")
                )
        for claim_id, claim in published.items():
            if claim.reviewed_at is not None and claim.reviewed_at > _seen(claim) and claim.reviewed_verdict is not None:
                changes[claim_id].append(f"reviewed again as {claim.reviewed_verdict.common} by {claim.reviewed_by}")
        return changes

    def published(self) -> list[QueueClaim]:
        """Published claims, newest publication first."""
        with Session(self.engine) as s:
            query = select(QueueClaimRow).where(QueueClaimRow.status == "published").order_by(QueueClaimRow.published_at.desc())
            return [_claim(r) for r in s.scalars(query).all()]

    def count(self) -> int:
        with Session(self.engine) as s:
            return int(s.scalar(select(func.count()).select_from(QueueClaimRow)) or 0)


# --- checking what comes in ------------------------------------------------------------

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_FIELD_NAMES = {"source_url": "appeared at", "appeared_on": "appeared on", "due_on": "due", "reviewed_verdict": "verdict"}


def checked_new(claim: NewClaim) -> NewClaim:
    """``claim`` as the queue would store it (spacing, dates, tags), or a QueueError saying what does not read."""
    try:
        text = validate_claim(claim.text).text
    except InvalidClaimError as exc:
        raise QueueError(str(exc)) from None
    return NewClaim(
        text=" ".join(text.split()),
        appearance=_checked_appearance(claim.appearance),
        assignee=_text_field(claim.assignee, "assignee"),
        due_on=_day(claim.due_on, "due date") if claim.due_on.strip() else "",
        tags=_checked_tags(claim.tags),
        language=_language(claim.language) if claim.language.strip() else detect_language(text),
    )


def _checked_appearance(appearance: Appearance) -> Appearance:
    url = appearance.url.strip()
    if url and (
        len(url) > MAX_URL or not re.match(r"https?://[^\s/]+", url, re.IGNORECASE) or unsafe_char(url) or any(c.isspace() for c in url)
    ):
        raise QueueError(f"where it appeared must be a web address starting http:// or https://, not {url[:80]!r}")
    on = _day(appearance.on, "date it appeared") if appearance.on.strip() else ""
    return Appearance(url=url, on=on, claimant=_text_field(appearance.claimant, "claimant"))


def _prose(text: str, what: str, limit: int, if_empty: str) -> str:
    """A comment or a reason as written, lines kept: not empty, within its limit, no control or hidden characters."""
    body = text.strip()
    if not body:
        raise QueueError(if_empty)
    if len(body) > limit:
        raise QueueError(f"the {what} has {len(body):,} characters; the limit is {limit:,}: shorten it")
    if (bad := unsafe_char(body.replace("\n", " ").replace("\t", " "))) is not None:
        raise QueueError(f"the {what} contains {bad[1]} at position {bad[0] + 1}; remove it")
    return body


def _text_field(value: str, what: str) -> str:
    cleaned = " ".join(str(value or "").split())
    if len(cleaned) > MAX_FIELD:
        raise QueueError(f"the {what} has {len(cleaned)} characters; the limit is {MAX_FIELD}")
    if (bad := unsafe_char(cleaned)) is not None:
        raise QueueError(f"the {what} contains {bad[1]} at position {bad[0] + 1}; remove it")
    return cleaned


def _day(value: str, what: str) -> str:
    text = str(value or "").strip()
    if len(text) > 10 and _DAY.match(text) and text[10] in "T ":  # a date and time, as a spreadsheet writes it: the day
        text = text[:10]
    if _DAY.fullmatch(text):
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            pass
    raise QueueError(f"the {what} must be a day written YYYY-MM-DD, not {text[:40]!r}")


def _tag(tag: str) -> str:
    return " ".join(str(tag).replace(",", " ").split()).lower()


def _checked_tags(tags: Iterable[str]) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(t for t in (_tag(_text_field(t, "tag")) for t in tags) if t))
    if len(cleaned) > MAX_TAGS:
        raise QueueError(f"{len(cleaned)} tags; the limit is {MAX_TAGS}")
    return cleaned


def parse_tags(text: str) -> tuple[str, ...]:
    """Tags as typed or read from a file: separated by commas or semicolons."""
    return _checked_tags(re.split(r"[,;]", text or ""))


def _tags_column(tags: Sequence[str]) -> str:
    return "," + ",".join(tags) + "," if tags else ""


def _tags_of(column: str | None) -> tuple[str, ...]:
    return tuple(t for t in (column or "").split(",") if t)


def _fields_of(claim: NewClaim) -> dict[str, Any]:
    a = claim.appearance
    return {"claim": claim.text, "appeared at": a.url, "appeared on": a.on, "claimant": a.claimant, "assignee": claim.assignee,
            "due": claim.due_on, "tags": ", ".join(claim.tags), "language": claim.language}  # fmt: skip


def _language(code: str) -> str:
    try:
        return checked_code(code)
    except ValueError as exc:
        raise QueueError(str(exc)) from None


def _public(name: str, value: Any) -> Any:
    """A value as the history shows it (tags as a list, times left out)."""
    if name == "tags":
        return ", ".join(_tags_of(value))
    if name == "reviewed_at":
        return None
    return value


def _shown(value: Any) -> str:
    return "—" if value in (None, "") else str(value)


def name_of(by: User) -> str:
    """Who acts, as every queue record names them; refused when nobody is named."""
    if not by.name.strip():
        raise QueueError("enter your name first: every change to the queue is recorded with who made it")
    return by.name


def _change(claim_id: str, by: User, action: str, detail: dict[str, Any], at: float) -> QueueChangeRow:
    detail = {k: v for k, v in detail.items() if not (isinstance(v, list) and v[0] is None and v[1] is None)}
    return QueueChangeRow(claim_id=claim_id, at=at, by=name_of(by), action=action, detail=json.dumps(detail))


def _claim(row: QueueClaimRow) -> QueueClaim:
    # Spelt out: the appearance's three columns, the JSON and list columns, and the text columns whose NULL reads as "".
    return from_columns(
        QueueClaim,
        row,
        appearance=Appearance(url=row.source_url or "", on=row.appeared_on or "", claimant=row.claimant or ""),
        assignee=row.assignee or "",
        due_on=row.due_on or "",
        tags=_tags_of(row.tags),
        reviewed_verdict=CardLabel.of(row.reviewed_verdict) if row.reviewed_verdict else None,
        review_reason=row.review_reason or "",
        reviewed_by=row.reviewed_by or "",
        reviewed_run=row.reviewed_run or "",
        published_by=row.published_by or "",
        claimreview=json.loads(row.claimreview) if row.claimreview else None,
        publish_version=row.publish_version or 0,
        withdrawn=json.loads(row.withdrawn) if row.withdrawn else None,
        language=row.language or "",
        repeats=row.repeats or "",
    )


def _one_of(column: InstrumentedAttribute[str | None], chosen: Sequence[str]) -> ColumnElement[bool]:
    """The filter for a column whose value is one of ``chosen``, where "" chooses the rows that have none (NULL)."""
    named = [value for value in chosen if value]
    clauses = [column.in_(named)] if named else []
    if "" in chosen:
        clauses.append(column.is_(None))
    return or_(*clauses)


def _seen(claim: QueueClaim) -> float:
    return claim.record_seen_at or claim.published_at or 0.0


__all__ = [
    "CLAIM_STATUSES",
    "NEXT_STATUSES",
    "QUEUE_TABLES",
    "Appearance",
    "ClaimQueue",
    "ClaimStatus",
    "NewClaim",
    "NotAllowedError",
    "Publication",
    "QueueChange",
    "QueueClaim",
    "QueueError",
    "QueueFilter",
    "name_of",
    "parse_tags",
]
