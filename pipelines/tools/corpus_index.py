"""The local evidence store: passages in Chroma, one collection per corpus, searched by meaning.

Chroma runs embedded (a PersistentClient in the data folder) or against a Chroma server
when ``AppSettings.chroma_url`` is set. Embeddings are always ours (MiniLM, offline):
Chroma's own default embedder would try to download a model.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from corpora.base import Passage
from pipelines.config import AppSettings
from pipelines.errors import UnknownCorpusError
from pipelines.tools.embeddings import Embedder

COLLECTION_PREFIX = "dd_"
_NAME_OK = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


@dataclass(frozen=True)
class Hit:
    """A passage found for a query, with how it scored."""

    passage: Passage
    score: float
    scores: dict[str, float]


@dataclass(frozen=True)
class IngestReport:
    corpus: str
    documents: int
    passages: int
    added: int
    already_present: int


def validate_corpus_name(name: str) -> str:
    """Corpus names become collection names: lowercase letters, digits, '.', '_' and '-'."""
    cleaned = name.strip().lower()
    if not _NAME_OK.match(cleaned):
        raise ValueError(f"corpus name {name!r}: use 1-63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
    return cleaned


class _ChromaEmbeddingFunction:
    """Adapter so a Chroma collection never falls back to its downloading default embedder."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def __call__(self, input: list[str]) -> list[Any]:
        return list(self._embedder.embed(list(input)))

    @staticmethod
    def name() -> str:
        return "debatedesk-minilm"

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> _ChromaEmbeddingFunction:
        # Chroma calls this when it reopens a collection; ours is always passed in explicitly.
        from pipelines.tools.embeddings import default_embedder

        return _ChromaEmbeddingFunction(default_embedder())

    def is_legacy(self) -> bool:
        return False

    def get_config(self) -> dict[str, Any]:
        return {}

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def embed_query(self, input: list[str]) -> list[Any]:
        return self(input)


class CorpusIndex:
    """Named corpora of passages, with ingestion that never duplicates and search by meaning."""

    def __init__(self, settings: AppSettings, embedder: Embedder) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        if settings.chroma_url:
            host, _, port = settings.chroma_url.removeprefix("http://").removeprefix("https://").rstrip("/").partition(":")
            self._client = chromadb.HttpClient(host=host, port=int(port or 8000), settings=chroma_settings)
        else:
            path = settings.data_dir / "chroma"
            path.mkdir(parents=True, exist_ok=True)
            self._client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        self._embedder = embedder
        self._ef = _ChromaEmbeddingFunction(embedder)
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def corpora(self) -> dict[str, dict[str, int]]:
        """Every corpus with its passage and document counts."""
        found: dict[str, dict[str, int]] = {}
        for collection in self._client.list_collections():
            name = collection.name if hasattr(collection, "name") else str(collection)
            if not name.startswith(COLLECTION_PREFIX):
                continue
            col = self._collection(name.removeprefix(COLLECTION_PREFIX))
            meta = col.metadata or {}
            found[name.removeprefix(COLLECTION_PREFIX)] = {"passages": col.count(), "documents": int(meta.get("documents", 0))}
        return found

    def has(self, corpus: str) -> bool:
        return corpus in self.corpora()

    def count(self, corpus: str) -> int:
        return self._collection(corpus).count() if self.has(corpus) else 0

    def ingest(self, corpus: str, passages: Iterable[Passage], batch_size: int = 256) -> IngestReport:
        """Add passages; ones already present (same id and text) are skipped, so re-ingesting is safe."""
        corpus = validate_corpus_name(corpus)
        with self._lock:
            col = self._collection(corpus, create=True)
            added = present = 0
            docs: set[str] = set()
            batch: list[Passage] = []
            total = 0
            for passage in passages:
                batch.append(passage)
                docs.add(passage.doc_id)
                total += 1
                if len(batch) >= batch_size:
                    a, p = self._add_batch(col, batch)
                    added, present, batch = added + a, present + p, []
            if batch:
                a, p = self._add_batch(col, batch)
                added, present = added + a, present + p
            meta = dict(col.metadata or {})
            known_docs = int(meta.get("documents", 0))
            meta["documents"] = known_docs + len(docs) if added else known_docs
            col.modify(metadata=_writable_metadata(meta))
        return IngestReport(corpus=corpus, documents=len(docs), passages=total, added=added, already_present=present)

    def search(self, corpus: str, query: str, k: int = 3) -> list[Hit]:
        """The ``k`` passages closest in meaning to ``query``, best first (score = cosine)."""
        if not self.has(corpus):
            raise UnknownCorpusError(corpus, list(self.corpora()))
        col = self._collection(corpus)
        vector = self._embedder.embed([query])
        result = col.query(
            query_embeddings=[vector[0].tolist()],
            n_results=max(1, min(k, col.count() or 1)),
            include=["documents", "metadatas", "distances"],
        )
        hits: list[Hit] = []
        ids = result["ids"][0]
        metadatas = (result.get("metadatas") or [[]])[0]
        documents = (result.get("documents") or [[]])[0]
        distances = (result.get("distances") or [[]])[0]
        for pid, meta, text, distance in zip(ids, metadatas, documents, distances, strict=True):
            score = round(1.0 - float(distance), 4)
            hits.append(Hit(passage=_passage_from(pid, meta or {}, text or ""), score=score, scores={"dense": score}))
        return hits

    def delete(self, corpus: str) -> None:
        if not self.has(corpus):
            raise UnknownCorpusError(corpus, list(self.corpora()))
        self._client.delete_collection(COLLECTION_PREFIX + corpus)

    def _collection(self, corpus: str, create: bool = False) -> Any:
        name = COLLECTION_PREFIX + corpus
        if create:
            return self._client.get_or_create_collection(
                name=name,
                embedding_function=self._ef,  # type: ignore[arg-type]
                metadata={"hnsw:space": "cosine", "corpus": corpus},
            )
        return self._client.get_collection(name=name, embedding_function=self._ef)  # type: ignore[arg-type]

    def _add_batch(self, col: Any, batch: list[Passage]) -> tuple[int, int]:
        unique = {p.id: p for p in batch}
        ids = list(unique)
        existing = col.get(ids=ids, include=["metadatas"])
        known = {pid: (meta or {}).get("text_hash") for pid, meta in zip(existing["ids"], existing["metadatas"] or [], strict=False)}
        fresh = [p for p in unique.values() if known.get(p.id) != _text_hash(p)]
        if fresh:
            vectors = self._embedder.embed([p.indexed_text for p in fresh])
            col.upsert(
                ids=[p.id for p in fresh],
                embeddings=[v.tolist() for v in vectors],
                documents=[p.text for p in fresh],
                metadatas=[_metadata_of(p) for p in fresh],
            )
        return len(fresh), len(unique) - len(fresh)


def _text_hash(p: Passage) -> str:
    return hashlib.sha1(f"{p.title}\n{p.text}".encode()).hexdigest()[:16]


def _metadata_of(p: Passage) -> dict[str, Any]:
    return {
        "doc_id": p.doc_id,
        "title": p.title,
        "index": p.index,
        "sentences": ",".join(str(i) for i in p.sentence_indices),
        "source": p.source,
        "url": p.url or "",
        "text_hash": _text_hash(p),
    }


def _passage_from(pid: str, meta: dict[str, Any], text: str) -> Passage:
    sentences = tuple(int(i) for i in str(meta.get("sentences", "")).split(",") if i != "")
    return Passage(
        id=pid,
        doc_id=str(meta.get("doc_id", pid)),
        title=str(meta.get("title", "")),
        text=text,
        index=int(meta.get("index", 0)),
        sentence_indices=sentences,
        source=str(meta.get("source", "")),
        url=str(meta.get("url")) or None,
    )


def _writable_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    # Chroma refuses to change the distance function after creation; leave it out of updates.
    return {k: v for k, v in meta.items() if not k.startswith("hnsw:")}
