"""The run store: every run and every event, persisted as it happens (SQLite or PostgreSQL)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Float, ForeignKey, Integer, String, Text, UniqueConstraint, create_engine, event, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from pipelines import __version__
from pipelines.events import Event, ModelCallCompleted, VerdictReached, dump_event, parse_event

RunStatus = str  # "running" | "completed" | "failed"


class _Base(DeclarativeBase):
    pass


class RunRow(_Base):
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


class EventRow(_Base):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("run_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(64))
    at: Mapped[float] = mapped_column(Float)
    payload: Mapped[str] = mapped_column(Text)


@dataclass(frozen=True)
class RunSummary:
    id: str
    claim: str
    protocol: str
    status: str
    verdict: str | None
    confidence: float | None
    created_at: float
    finished_at: float | None
    model_calls: int
    tokens_in: int
    tokens_out: int
    config: dict[str, Any]


class RunStore:
    """Runs and their events behind SQLAlchemy; one instance can be shared by threads."""

    def __init__(self, url: str) -> None:
        kwargs: dict[str, Any] = {}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        self.engine = create_engine(url, **kwargs)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        _Base.metadata.create_all(self.engine)
        self._seq: dict[str, int] = {}
        self._lock = threading.Lock()

    def create_run(self, run_id: str, claim: str, protocol: str, config: dict[str, Any]) -> None:
        with Session(self.engine) as s, s.begin():
            s.add(RunRow(id=run_id, claim=claim, protocol=protocol, status="running", created_at=time.time(), config=json.dumps(config)))
        self._seq[run_id] = 0

    def append(self, run_id: str, evt: Event) -> int:
        """Persist one event now; returns its sequence number in the run."""
        with self._lock:
            seq = self._seq.get(run_id)
            if seq is None:
                seq = self._max_seq(run_id)
            seq += 1
            self._seq[run_id] = seq
            with Session(self.engine) as s, s.begin():
                s.add(EventRow(run_id=run_id, seq=seq, type=type(evt).__name__, at=evt.at, payload=json.dumps(dump_event(evt))))
                row = s.get(RunRow, run_id)
                if row is not None:
                    if isinstance(evt, ModelCallCompleted):
                        row.model_calls += 1
                        row.tokens_in += evt.tokens_in
                        row.tokens_out += evt.tokens_out
                    elif isinstance(evt, VerdictReached):
                        row.verdict = evt.verdict.label
                        row.confidence = evt.verdict.confidence
            return seq

    def finish(self, run_id: str, status: RunStatus) -> None:
        with Session(self.engine) as s, s.begin():
            row = s.get(RunRow, run_id)
            if row is not None:
                row.status = status
                row.finished_at = time.time()

    def events(self, run_id: str) -> list[Event]:
        with Session(self.engine) as s:
            rows = s.scalars(select(EventRow).where(EventRow.run_id == run_id).order_by(EventRow.seq)).all()
            return [parse_event(r.payload) for r in rows]

    def get_run(self, run_id: str) -> RunSummary | None:
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            return _summary(row) if row else None

    def list_runs(self, limit: int = 200) -> list[RunSummary]:
        with Session(self.engine) as s:
            rows = s.scalars(select(RunRow).order_by(RunRow.created_at.desc()).limit(limit)).all()
            return [_summary(r) for r in rows]

    def _max_seq(self, run_id: str) -> int:
        with Session(self.engine) as s:
            return int(s.scalar(select(func.max(EventRow.seq)).where(EventRow.run_id == run_id)) or 0)


def _summary(row: RunRow) -> RunSummary:
    return RunSummary(
        id=row.id,
        claim=row.claim,
        protocol=row.protocol,
        status=row.status,
        verdict=row.verdict,
        confidence=row.confidence,
        created_at=row.created_at,
        finished_at=row.finished_at,
        model_calls=row.model_calls,
        tokens_in=row.tokens_in,
        tokens_out=row.tokens_out,
        config=json.loads(row.config or "{}"),
    )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
