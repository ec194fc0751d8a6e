"""A comment on a claim of the queue, on a run, or on one exhibit of a run: who wrote it, when, and its text (plain, unescaped).

Part of the record: the exports carry a run's comments; the claims queue (``pipelines.newsroom``) writes and reads them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MAX_COMMENT = 4000


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
