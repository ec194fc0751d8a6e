"""A comment on a claim of the queue, on a run, or on one exhibit of a run: who wrote it, when, and its text (plain, unescaped).

Part of the record: the exports carry a run's comments; the claims queue (``pipelines.newsroom``) writes and reads them.
``check_comment`` is what a comment must pass before it is kept: something visible, no control character (NUL
included), within the limit, and about a run and an exhibit that exist in this desk's store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import describe_char, is_invisible, unsafe_char

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

MAX_COMMENT = 4000


class CommentRefusedError(DebateDeskError, ValueError):
    """A comment that is not kept; the message says why, in words the person can act on."""


def check_comment(engine: Engine, text: str, *, run_id: str | None = None, evidence_id: str | None = None) -> str:
    """The comment's text as it is kept (trimmed), or CommentRefusedError: empty or blank-looking, a control character, too long,
    or about a run or an exhibit this desk's store does not hold. ``engine`` is the run store's (where comments are kept)."""
    body = (text or "").strip()
    if not body:
        raise CommentRefusedError("the comment is empty; write something first")
    if len(body) > MAX_COMMENT:
        raise CommentRefusedError(f"the comment has {len(body):,} characters; the limit is {MAX_COMMENT:,}: shorten it")
    if (bad := unsafe_char(body.replace("\n", " ").replace("\t", " "))) is not None:
        raise CommentRefusedError(f"the comment contains {describe_char(bad[1])} at position {bad[0] + 1}; remove it")
    if is_invisible(body):
        raise CommentRefusedError(
            "the comment shows nothing (only spaces or invisible characters such as zero-width spaces); write something"
        )
    if evidence_id and not run_id:
        raise CommentRefusedError("a comment on an exhibit needs the run the exhibit belongs to")
    if run_id:
        _check_target(engine, run_id, evidence_id)
    return body


def _check_target(engine: Engine, run_id: str, evidence_id: str | None) -> None:
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from pipelines.core.database.tables import EventRow, RunRow
    from pipelines.core.events import parse_event
    from pipelines.record.digest import digest

    with Session(engine) as s:
        if s.get(RunRow, run_id) is None:
            raise CommentRefusedError(f"there is no run {run_id!r} on this desk to comment on")
        if not evidence_id:
            return
        payloads = s.scalars(select(EventRow.payload).where(EventRow.run_id == run_id).order_by(EventRow.seq)).all()
    if evidence_id not in digest([parse_event(p) for p in payloads]).evidence:
        raise CommentRefusedError(f"run {run_id} has no exhibit {evidence_id!r} to comment on")


@dataclass(frozen=True)
class Comment:
    """One comment. ``run_id`` and ``evidence_id`` say what it is about; a comment on a queued claim has ``claim_id`` only."""

    id: int
    author: str
    at: float
    text: str
    claim_id: str | None = None
    run_id: str | None = None
    evidence_id: str | None = None

    @property
    def about(self) -> str:
        """What the comment is on, in words: "exhibit E3", "the run", "the claim"."""
        if self.evidence_id:
            return f"exhibit {self.evidence_id}"
        return "the run" if self.run_id else "the claim"

    def to_dict(self) -> dict[str, Any]:
        """The comment as an export carries it: without ``id``, which numbers it in this desk's database only."""
        return {name: value for name, value in asdict(self).items() if name != "id"}
