"""The evidence memory: evidence found for earlier claims, kept in the run store's database and recalled for later ones.

Each item keeps the query that found it, its source, the claim and the entities it was
found for, when it was kept and last used, and an embedding of its text. A later claim
recalls items by entity match (its triplets' subjects and objects against the kept
entities) and by embedding similarity (claim against item text). One table,
``evidence_memory`` of the desk's database (``core/database/tables.py``; SQLite or PostgreSQL by URL).

Similarity is computed in numpy over every kept vector: right for a desk's thousands of
items; a shared desk that keeps millions would move the vectors to the Chroma server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from sqlalchemy import Engine, create_engine, delete, func, select
from sqlalchemy.orm import Session

from pipelines.core.database import migrations
from pipelines.core.database.faults import is_store_fault
from pipelines.core.database.rows import from_columns
from pipelines.core.database.tables import MemoryRow
from pipelines.core.domain import Evidence
from pipelines.core.errors import ToolUnavailableError
from pipelines.core.text.stopwords import STOPWORDS
from pipelines.run.tools.embeddings import Embedder

ENTITY_MATCH_AT = 0.5  # word overlap (Jaccard) at which two entity names count as the same entity


@dataclass(frozen=True)
class MemoryItem:
    """One kept evidence item, with where and when it was found."""

    key: str
    source: str
    text: str
    title: str
    url: str | None
    corpus: str | None
    doc_id: str | None
    passage_index: int | None
    query: str
    claim: str
    topic: str
    entities: tuple[str, ...]
    created_at: float

    def as_evidence(self, **found: Any) -> Evidence:
        """The kept item back as evidence in a run: what it kept of the evidence it was, then ``found`` (its id, how it was found now)."""
        return Evidence(**({name: getattr(self, name) for name in KEPT_FROM_EVIDENCE} | found))


@dataclass(frozen=True)
class Recall:
    """A kept item recalled for a claim or a query, and why: the entity it matched and/or its similarity."""

    item: MemoryItem
    similarity: float
    entity: str | None = None

    @property
    def match(self) -> str:
        parts = [f"entity '{self.entity}'"] if self.entity else []
        parts.append(f"similarity {self.similarity:.2f}")
        return " · ".join(parts)


# What an item keeps of the evidence it was found as: the fields the two share, by name (the text, where it came from, the query).
KEPT_FROM_EVIDENCE = {f.name for f in fields(MemoryItem)} & set(Evidence.model_fields)


class EvidenceMemory:
    """Evidence kept across runs, recalled by entity and by meaning; safe to share between threads."""

    def __init__(self, engine: Engine, embedder: Embedder) -> None:
        self.engine = engine
        self._embedder = embedder
        self._lock = threading.Lock()
        migrations.upgrade(engine)  # its table is the desk database's (pipelines/core/database/tables.py)

    @classmethod
    def from_url(cls, url: str, embedder: Embedder) -> EvidenceMemory:
        return cls(create_engine(url), embedder)

    def remember(self, items: Sequence[Evidence], *, claim: str, topic: str, entities: Sequence[str], run_id: str = "") -> tuple[int, int]:
        """Keep ``items`` (found for ``claim``); an item kept before gains the new entities. Returns (added, refreshed)."""
        fresh = {evidence_key(e): e for e in items if e.source in ("corpus", "web") and e.text.strip()}
        if not fresh:
            return 0, 0
        names = {normalize_entity(x) for x in entities if x.strip()}
        now = time.time()
        with _reaching("kept"), self._lock, Session(self.engine) as s, s.begin():
            known = list(s.scalars(select(MemoryRow).where(MemoryRow.key.in_(list(fresh)))))
            for row in known:
                row.entities = json.dumps(sorted(set(json.loads(row.entities)) | names))
                row.last_used_at = now
                row.uses += 1
            known_keys = {row.key for row in known}
            new = [(key, e) for key, e in fresh.items() if key not in known_keys]
            # Only new items are embedded: on a busy 2-core box one MiniLM batch takes about a second.
            vectors = self._embedder.embed([e.text for _, e in new])
            for (key, evidence), vector in zip(new, vectors, strict=True):
                s.add(
                    MemoryRow(
                        key=key,
                        **evidence.model_dump(include=KEPT_FROM_EVIDENCE),
                        claim=claim,
                        topic=topic,
                        entities=json.dumps(sorted(names)),
                        embedding=np.asarray(vector, dtype=np.float32).tobytes(),
                        run_id=run_id,
                        created_at=now,
                        last_used_at=now,
                        uses=0,
                    )
                )
        return len(new), len(known)

    def recall(self, *, text: str, entities: Sequence[str], k: int, min_similarity: float, entity_similarity: float = 0.0) -> list[Recall]:
        """Up to ``k`` kept items at least ``min_similarity`` similar to ``text``, or ``entity_similarity`` where one of ``entities`` matches; best first.

        An entity every claim of a beat shares ("COVID-19" on Check-COVID) matches every kept item, so an
        entity match alone recalled other claims' evidence at similarity 0.27; ``entity_similarity`` is the floor
        such a match still needs (bench/memory_recall.py chose mermaid's on train).
        """
        with _reaching("read"):
            rows = self._rows()
        if not rows:
            return []
        query_vector = self._embedder.embed([text])[0]
        wanted = [normalize_entity(e) for e in entities if e.strip()]
        found: list[Recall] = []
        for row, vector in rows:
            similarity = float(np.dot(query_vector, vector))
            entity = _matching_entity(wanted, json.loads(row.entities))
            if similarity < (min_similarity if entity is None else min(entity_similarity, min_similarity)):  # a match never asks more
                continue
            found.append(Recall(item=_item(row), similarity=round(similarity, 4), entity=entity))
        found.sort(key=lambda r: (r.entity is not None and r.similarity >= min_similarity, r.similarity), reverse=True)
        return found[:k]

    def mark_used(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if not keys:
            return
        with _reaching("updated"), self._lock, Session(self.engine) as s, s.begin():
            for row in s.scalars(select(MemoryRow).where(MemoryRow.key.in_(keys))):
                row.uses += 1
                row.last_used_at = time.time()

    def count(self) -> int:
        with Session(self.engine) as s:
            return int(s.scalar(select(func.count()).select_from(MemoryRow)) or 0)

    def clear(self) -> None:
        with self._lock, Session(self.engine) as s, s.begin():
            s.execute(delete(MemoryRow))

    def _rows(self) -> list[tuple[MemoryRow, np.ndarray]]:
        with Session(self.engine) as s:
            rows = list(s.scalars(select(MemoryRow)))
            s.expunge_all()
        return [(row, np.frombuffer(row.embedding, dtype=np.float32)) for row in rows]


@contextmanager
def _reaching(done: str) -> Iterator[None]:
    """The desk's database away (down, disk full, read-only) as the memory being unavailable, in words: a run goes on without it."""
    try:
        yield
    except Exception as exc:
        if not is_store_fault(exc):  # the run store's own test of the same database (core/database/faults.py)
            raise
        raise ToolUnavailableError(
            f"the evidence memory could not be {done}: the desk's database is unreachable or cannot be written"
        ) from exc


def evidence_key(evidence: Evidence) -> str:
    """What makes two items the same evidence: the web page, or the corpus passage."""
    if evidence.url and (evidence.source == "web" or not evidence.doc_id):
        return f"web:{evidence.url}"
    return f"corpus:{evidence.corpus}:{evidence.doc_id}#p{evidence.passage_index}"


def normalize_entity(name: str) -> str:
    """Lower case, punctuation dropped, single spaces: 'SARS-CoV-2 ' and 'sars-cov-2' are one entity."""
    return " ".join(re.findall(r"[a-z0-9][a-z0-9\-']*", name.lower()))


def entity_words(name: str) -> set[str]:
    return {w for w in normalize_entity(name).split() if w not in STOPWORDS and len(w) > 1}


def _matching_entity(wanted: Sequence[str], kept: Sequence[str]) -> str | None:
    """The first wanted entity whose words overlap a kept entity's by at least ENTITY_MATCH_AT (Jaccard)."""
    for entity in wanted:
        words = entity_words(entity)
        if not words:
            continue
        for other in kept:
            other_words = entity_words(other)
            if other_words and len(words & other_words) / len(words | other_words) >= ENTITY_MATCH_AT:
                return entity
    return None


def _item(row: MemoryRow) -> MemoryItem:
    return from_columns(MemoryItem, row, entities=tuple(json.loads(row.entities)))
