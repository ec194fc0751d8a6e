"""Seen before? An incoming claim matched against the fact-checks a desk already has: its own claims that were reviewed
or published, and other organisations' ClaimReviews it imported.

Each earlier fact-check is a ``Checked``; ``nearest`` ranks them for a new claim by how alike the two statements are,
and ``Thresholds`` say what a score means: at or above ``suggest`` the earlier check is offered to the checker ("checked
on 2026-11-30: REFUTED"), at or above ``join`` the new claim is linked to it (its verdict a proposal, never a published
rating). A desk sets both; the defaults were fitted on a train set of paraphrased PolitiFact claims and measured on a dev
set (``bench/seen_before.py``, docs/measurements/2026-12-02-seen-before.md).

The score is the cosine of the two statements' MiniLM embeddings (all-MiniLM-L6-v2, the embedder the corpora use),
raised a little where they share their content words (numbers and names carry a claim; two claims on one topic with
different figures are different claims). MiniLM was trained on English: a claim in another language is matched only
as far as the words the two share, and the desk is told so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pipelines.core.config import AppSettings
from pipelines.newsroom.access.users import User
from pipelines.newsroom.queue import ClaimQueue, QueueClaim
from pipelines.newsroom.reviews_in import OutsideReview
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.lexical import tokenize

MatchLevel = Literal["join", "suggest", "nearest"]
# The share of the score given to the overlap of content words (the rest is the embeddings' cosine).
LEXICAL_SHARE = 0.3
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Thresholds:
    """What a similarity score means on this desk: offered to the checker from ``suggest``, joined from ``join``."""

    suggest: float = 0.65  # on train: 40 of 42 paraphrases offered their source, 1 of 42 unchecked claims offered a match
    join: float = 0.85  # on train: every join right; no wrong top match scored 0.80 or more

    def __post_init__(self) -> None:
        if not 0.0 < self.suggest <= self.join <= 1.0:
            raise ValueError(f"thresholds must satisfy 0 < suggest <= join <= 1; got suggest {self.suggest}, join {self.join}")

    def level(self, score: float) -> MatchLevel:
        return "join" if score >= self.join else "suggest" if score >= self.suggest else "nearest"


@dataclass(frozen=True)
class Checked:
    """An earlier fact-check a new claim may repeat: this desk's own claim, or another organisation's review."""

    key: str  # "claim:ID" for the desk's own, "review:ID" for an imported ClaimReview
    text: str
    verdict: str  # the desk's reviewed verdict, or the other organisation's rating as it wrote it
    date: str = ""  # ISO date of the review or publication
    link: str = ""  # where it can be read: the claim's page, or the review's public address
    source: str = "this desk"  # or the organisation that published the review
    language: str = ""

    @property
    def own(self) -> bool:
        return self.key.startswith("claim:")


@dataclass(frozen=True)
class Match:
    checked: Checked
    score: float
    level: MatchLevel
    parts: dict[str, float] = field(default_factory=dict)  # the cosine and the word overlap, for the curious

    def describe(self) -> str:
        """One line for the checker: "checked on 2026-11-30 by this desk: REFUTED (similarity 0.93)"."""
        when = f" on {self.checked.date}" if self.checked.date else ""
        language = f", in {self.checked.language}" if self.checked.language else ""
        return f"checked{when} by {self.checked.source}{language}: {self.checked.verdict} (similarity {self.score:.2f})"


def content_words(text: str) -> set[str]:
    """The words that carry a claim: stemmed, without stop words (the corpus index's tokens), and its numbers whole."""
    return set(tokenize(text)) | set(_NUMBER.findall(text))


def word_overlap(a: set[str], b: set[str]) -> float:
    """How much of the shorter statement's content the longer one shares (0 to 1)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def scores(query: str, texts: Sequence[str], embedder: Embedder) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each text: the combined score, the cosine of the embeddings, and the word overlap with ``query``."""
    if not texts:
        empty = np.zeros(0, dtype=np.float32)
        return empty, empty, empty
    vectors = embedder.embed([query, *texts])  # unit length: a dot product is the cosine
    cosine = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    words = content_words(query)
    overlap = np.array([word_overlap(words, content_words(t)) for t in texts], dtype=np.float32)
    return (1 - LEXICAL_SHARE) * cosine + LEXICAL_SHARE * overlap, cosine, overlap


def nearest(query: str, checked: Sequence[Checked], embedder: Embedder, *, k: int = 5, thresholds: Thresholds | None = None) -> list[Match]:
    """The ``k`` earlier fact-checks most like ``query``, best first, each with its score and what the score means."""
    thresholds = thresholds or Thresholds()
    combined, cosine, overlap = scores(query, [c.text for c in checked], embedder)
    order = np.argsort(-combined, kind="stable")[:k]
    return [
        Match(
            checked[i],
            round(float(combined[i]), 4),
            thresholds.level(float(combined[i])),
            {"cosine": round(float(cosine[i]), 4), "words": round(float(overlap[i]), 4)},
        )
        for i in order
    ]


def earlier_checks(claims: Sequence[QueueClaim], outside: Sequence[OutsideReview]) -> list[Checked]:
    """What a new claim may repeat: the desk's own claims that were reviewed (published or not), and the imported reviews."""
    from datetime import UTC, datetime

    def day(at: float | None) -> str:
        return datetime.fromtimestamp(at, UTC).date().isoformat() if at else ""

    own = [
        Checked(
            key=f"claim:{c.id}",
            text=c.text,
            verdict=c.reviewed_verdict.own,
            date=day(c.published_at or c.reviewed_at),
            link=f"/queue?claim={c.id}",
            source="this desk" + (" (published)" if c.status == "published" else " (reviewed)"),
            language=c.language,
        )
        for c in claims
        if c.reviewed_verdict is not None
    ]
    theirs = [
        Checked(
            key=f"review:{r.id}",
            text=r.claim_text,
            verdict=r.rating,
            date=r.published_on,
            link=r.url,
            source=r.organisation,
            language=r.language,
        )
        for r in outside
    ]
    return own + theirs


def thresholds_of(settings: AppSettings) -> Thresholds:
    """The desk's thresholds (``DEBATEDESK_MATCH_SUGGEST``, ``DEBATEDESK_MATCH_JOIN``); ValueError says what is wrong."""
    return Thresholds(suggest=settings.match_suggest, join=settings.match_join)


def check_on_intake(
    claim: QueueClaim,
    queue: ClaimQueue,
    outside: Sequence[OutsideReview],
    embedder: Embedder,
    by: User,
    *,
    thresholds: Thresholds | None = None,
) -> list[Match]:
    """Seen before? for a claim just added: the nearest earlier fact-checks (never itself), and at or above the join
    threshold the claim is joined to the best one (recorded in its history; its verdict a proposal only)."""
    checked = [c for c in earlier_checks(queue.find(limit=5000), outside) if c.key != f"claim:{claim.id}"]
    if not checked:
        return []
    matches = nearest(claim.text, checked, embedder, thresholds=thresholds)
    best = matches[0] if matches else None
    if best is not None and best.level == "join" and not claim.repeats and not across_languages(claim.language, best.checked.language):
        queue.set_repeats(claim.id, by, best.checked.key, best.score)
    return matches


def across_languages(a: str, b: str) -> bool:
    """Two claims both told to be in different languages: MiniLM was trained on English, so such a pair is offered to the
    checker at most, never joined on its own."""
    return bool(a and b and a.split("-")[0] != b.split("-")[0])
