"""Every table of the desk's one database, declared on one base: runs and their record, desk settings, sign-in, the
claims queue and its publications, notices, other organisations' reviews read in, the evidence memory, past evaluations.

The repositories on top of it (``record/store.py`` the run store, ``access/sessions.py`` sign-in, ``newsroom/queue.py``
the claims queue, ``newsroom/notices.py``, ``newsroom/reviews_in.py``) read and write these rows; the named migrations
in ``migrations/`` build exactly these tables (``desk_schema``; a test compares them), the evidence memory
(``run/tools/memory.py``) and past evaluations (``eval/records.py``) among them.
"""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from pipelines import __version__

MAX_FIELD = 300  # the longest short field: a person's name, a claimant, a tag, an organisation


class DeskTable(DeclarativeBase):
    """A table of the desk's database (its migrations build it)."""


def desk_schema() -> MetaData:
    """The tables the desk's code reads and writes, together; the migrations must build exactly these (a test compares them)."""
    return DeskTable.metadata


# --- runs and their record (the run store, pipelines/record/store.py) ----------------------------------------------


class RunRow(DeskTable):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    claim: Mapped[str] = mapped_column(Text)
    protocol: Mapped[str] = mapped_column(String(64), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True, default="running")
    verdict: Mapped[str | None] = mapped_column(String(64), nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[float] = mapped_column(Float, index=True)
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    config: Mapped[str] = mapped_column(Text, default="{}")
    app_version: Mapped[str] = mapped_column(String(32), default=__version__)
    model_calls: Mapped[int] = mapped_column(Integer, default=0)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    # Added for durable runs; the first migration adds them to a database made before them.
    model_seconds: Mapped[float | None] = mapped_column(Float, nullable=True, default=0.0)
    event_count: Mapped[int | None] = mapped_column(Integer, nullable=True, default=0)
    attempts: Mapped[int | None] = mapped_column(Integer, nullable=True, default=1)
    owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    checker_verdict: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    checker_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    checker_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    origin: Mapped[str | None] = mapped_column(String(200), nullable=True, default="run")
    # Added for the verdict card and live cost: when the checker set their verdict; calls answered from a cache.
    checker_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    cached_calls: Mapped[int | None] = mapped_column(Integer, nullable=True, default=0)
    # Added for spend limits, re-runs and shared desks.
    stop_reason: Mapped[str | None] = mapped_column(Text, nullable=True)  # "stopped by budget: 40 of 40 model calls"
    source_run: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)  # a re-run's source run
    started_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # Added for desk settings: money spent at the run's prices (None: the run had no prices).
    spent: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Added by 0007: who decided the verdict (its decided_by), so a debate desk's exhibits settled is told from one that ran.
    decided_by: Mapped[str | None] = mapped_column(Text, nullable=True)


class EventRow(DeskTable):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("run_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(64))
    at: Mapped[float] = mapped_column(Float)
    payload: Mapped[str] = mapped_column(Text)
    # Added for the hash chain (pipelines/record/chain.py): this event's link, over the link before it and the payload.
    # None for events stored before chaining; _migrate adds the column to a database made before it.
    chain: Mapped[str | None] = mapped_column(String(64), nullable=True)


class JournalRow(DeskTable):
    """One model answer or tool result, in the order it was produced for its key."""

    __tablename__ = "journal"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(128))
    payload: Mapped[str] = mapped_column(Text)
    at: Mapped[float] = mapped_column(Float)


class DeskSettingRow(DeskTable):
    """The desk's settings (pipelines/run/desk_settings.py): one JSON value, its version and who saved it last."""

    __tablename__ = "desk_settings"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=1)
    changed_by: Mapped[str] = mapped_column(String(200), default="")
    changed_at: Mapped[float] = mapped_column(Float)


class DeskSettingChangeRow(DeskTable):
    """One change of a desk setting: before and after (API keys masked), who and when."""

    __tablename__ = "desk_settings_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[float] = mapped_column(Float, index=True)
    by: Mapped[str] = mapped_column(String(200))
    setting: Mapped[str] = mapped_column(String(100))
    before: Mapped[str] = mapped_column(Text)
    after: Mapped[str] = mapped_column(Text)


# --- sign-in (pipelines/newsroom/access/sessions.py) --------------------------------------------------------------------------


class SignInSessionRow(DeskTable):
    """A users-file sign-in: the browser holds the token in a signed cookie, the desk only its digest."""

    __tablename__ = "sign_in_sessions"

    token_digest: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 of the token: a copy of the table signs nobody in
    username: Mapped[str] = mapped_column(String(200), index=True)
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    revoked_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class SignInFailureRow(DeskTable):
    """Failed sign-ins in a row for one user name or one browser, and until when the next attempt waits."""

    __tablename__ = "sign_in_failures"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)  # "name:ana" or "browser:<digest>"
    failures: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[float] = mapped_column(Float)
    locked_until: Mapped[float] = mapped_column(Float, default=0.0)


class BrowserNameRow(DeskTable):
    """On a desk without sign-in: the name a browser gave for the audit trail, kept by the browser's cookie, not its address."""

    __tablename__ = "browser_names"

    browser_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[float] = mapped_column(Float)


# --- the claims queue, its comments and publications (pipelines/newsroom/queue.py) -----------------------------------


class QueueClaimRow(DeskTable):
    __tablename__ = "queue_claims"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    source_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # where the claim appeared
    appeared_on: Mapped[str | None] = mapped_column(String(10), nullable=True)  # YYYY-MM-DD
    claimant: Mapped[str | None] = mapped_column(String(MAX_FIELD), nullable=True, index=True)
    status: Mapped[str] = mapped_column(String(16), index=True, default="new")
    assignee: Mapped[str | None] = mapped_column(String(MAX_FIELD), nullable=True, index=True)
    due_on: Mapped[str | None] = mapped_column(String(10), nullable=True, index=True)  # YYYY-MM-DD
    tags: Mapped[str] = mapped_column(Text, default="")  # ",a,b," so one LIKE finds a tag on either database
    created_at: Mapped[float] = mapped_column(Float, index=True)
    created_by: Mapped[str] = mapped_column(String(MAX_FIELD))
    updated_at: Mapped[float] = mapped_column(Float)
    reviewed_verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    review_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    reviewed_by: Mapped[str | None] = mapped_column(String(MAX_FIELD), nullable=True)
    reviewed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    reviewed_run: Mapped[str | None] = mapped_column(String(64), nullable=True)
    published_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    published_by: Mapped[str | None] = mapped_column(String(MAX_FIELD), nullable=True)
    claimreview: Mapped[str | None] = mapped_column(Text, nullable=True)  # the published JSON-LD, as served
    # Added for corrections (migration 0004). publish_version: bumped by every publish, correction, confirmation and
    # unpublishing, each of which names the version it was decided on (compare-and-set), so two editors at once: one wins.
    publish_version: Mapped[int | None] = mapped_column(Integer, nullable=True, default=0)
    first_published_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # the datePublished every later version keeps
    record_seen_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # changes to the record after it are flagged
    withdrawn: Mapped[str | None] = mapped_column(Text, nullable=True)  # the "withdrawn" document served after unpublishing
    # Added for intake (migration 0005): the claim's language (ISO 639, "" unknown), and the earlier fact-check it repeats
    # ("claim:ID" or "review:ID", joined at or above the desk's join threshold, or by a person) with the similarity.
    language: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    repeats: Mapped[str | None] = mapped_column(String(64), nullable=True)
    repeats_score: Mapped[float | None] = mapped_column(Float, nullable=True)


class QueueRunRow(DeskTable):
    """A run made for a queued claim (a run belongs to one claim at most)."""

    __tablename__ = "queue_runs"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    claim_id: Mapped[str] = mapped_column(ForeignKey("queue_claims.id", ondelete="CASCADE"), index=True)
    linked_at: Mapped[float] = mapped_column(Float)
    linked_by: Mapped[str] = mapped_column(String(MAX_FIELD))


class QueueChangeRow(DeskTable):
    """The audit trail of the queue: one row per change to a claim."""

    __tablename__ = "queue_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    claim_id: Mapped[str] = mapped_column(ForeignKey("queue_claims.id", ondelete="CASCADE"), index=True)
    at: Mapped[float] = mapped_column(Float)
    by: Mapped[str] = mapped_column(String(MAX_FIELD))
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text, default="{}")  # JSON: field -> [before, after], or what the action names


class PublicationRow(DeskTable):
    """Every version of a claim's public address, kept: each publication, correction, confirmation and withdrawal."""

    __tablename__ = "queue_publications"
    __table_args__ = (UniqueConstraint("claim_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    claim_id: Mapped[str] = mapped_column(ForeignKey("queue_claims.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)  # the claim's publish_version this action made
    at: Mapped[float] = mapped_column(Float)
    by: Mapped[str] = mapped_column(String(MAX_FIELD))
    action: Mapped[str] = mapped_column(String(16))  # published, corrected, confirmed, withdrawn
    note: Mapped[str] = mapped_column(Text, default="")  # the correction note, why it was confirmed or withdrawn
    document: Mapped[str | None] = mapped_column(Text, nullable=True)  # what the address served from then (None: unchanged)


class CommentRow(DeskTable):
    __tablename__ = "comments"
    __table_args__ = (Index("ix_comments_run_evidence", "run_id", "evidence_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    claim_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    run_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    evidence_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    author: Mapped[str] = mapped_column(String(MAX_FIELD))
    at: Mapped[float] = mapped_column(Float, index=True)
    text: Mapped[str] = mapped_column(Text)


# --- notices (pipelines/newsroom/notices.py) -------------------------------------------------------------------------


class NoticeReadRow(DeskTable):
    """Up to when a person has read their notices (the only thing notices keep)."""

    __tablename__ = "notice_reads"

    person: Mapped[str] = mapped_column(String(300), primary_key=True)
    read_until: Mapped[float] = mapped_column(Float)


# --- other organisations' reviews, read in (pipelines/newsroom/reviews_in.py) ----------------------------------------


class OutsideReviewRow(DeskTable):
    """Another organisation's published fact-check, imported (never this desk's verdict)."""

    __tablename__ = "outside_reviews"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # sha256 of organisation and address (or claim)
    organisation: Mapped[str] = mapped_column(String(MAX_FIELD), index=True)
    url: Mapped[str] = mapped_column(Text)
    claim_text: Mapped[str] = mapped_column(Text)
    rating: Mapped[str] = mapped_column(String(MAX_FIELD))
    published_on: Mapped[str] = mapped_column(String(10), default="")  # YYYY-MM-DD, or "" when the review gives none
    claimant: Mapped[str] = mapped_column(String(MAX_FIELD), default="")
    language: Mapped[str] = mapped_column(String(16), default="")
    imported_at: Mapped[float] = mapped_column(Float, index=True)
    imported_by: Mapped[str] = mapped_column(String(MAX_FIELD))
    source_file: Mapped[str] = mapped_column(String(MAX_FIELD), default="")


# --- the evidence memory (pipelines/run/tools/memory.py) ---------------------------------------------------------------


class MemoryRow(DeskTable):
    """An evidence item kept for later claims, with its embedding (float32 bytes)."""

    __tablename__ = "evidence_memory"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(512), unique=True, index=True)
    source: Mapped[str] = mapped_column(String(16))
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    url: Mapped[str | None] = mapped_column(Text, nullable=True)
    corpus: Mapped[str | None] = mapped_column(String(64), nullable=True)
    doc_id: Mapped[str | None] = mapped_column(String(256), nullable=True)
    passage_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    query: Mapped[str] = mapped_column(Text, default="")
    claim: Mapped[str] = mapped_column(Text, default="")
    topic: Mapped[str] = mapped_column(Text, default="")
    entities: Mapped[str] = mapped_column(Text, default="[]")
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    run_id: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[float] = mapped_column(Float, index=True)
    last_used_at: Mapped[float] = mapped_column(Float)
    uses: Mapped[int] = mapped_column(Integer, default=0)


# --- past evaluations (pipelines/eval/records.py) ----------------------------------------------------------------------


class EvaluationRow(DeskTable):
    """An evaluation's headline figures, its whole report beside them as JSON."""

    __tablename__ = "evaluations"

    id: Mapped[str] = mapped_column(String(96), primary_key=True)
    created_at: Mapped[float] = mapped_column(Float, index=True)
    dataset: Mapped[str] = mapped_column(String(200))
    split: Mapped[str] = mapped_column(String(32))
    protocol: Mapped[str] = mapped_column(String(64), index=True)
    backend: Mapped[str] = mapped_column(String(64))
    labels: Mapped[str] = mapped_column(String(16))
    claims: Mapped[int] = mapped_column(Integer)
    failed: Mapped[int] = mapped_column(Integer)
    accuracy: Mapped[float] = mapped_column(Float)
    macro_f1: Mapped[float] = mapped_column(Float)
    ece: Mapped[float | None] = mapped_column(Float, nullable=True)
    evidence_recall: Mapped[float | None] = mapped_column(Float, nullable=True)
    model_calls: Mapped[int] = mapped_column(Integer)
    tokens_in: Mapped[int] = mapped_column(Integer)
    tokens_out: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float)
    report: Mapped[str] = mapped_column(Text)
