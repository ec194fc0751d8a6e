"""The local evidence store: passages in Chroma (by meaning) and in BM25 (by words), fused.

Chroma runs embedded (a PersistentClient in the data folder) or against a Chroma server
when ``AppSettings.chroma_url`` is set. Embeddings are always ours (MiniLM, offline):
Chroma's own default embedder would try to download a model. The BM25 index of each corpus
lives in the data folder (``bm25/<corpus>``), is rebuilt from the collection after every
ingestion, and is rebuilt on first use when missing or stale.

Search is by document: each signal scores passages, a document takes its best passage's
score (max aggregation), and hybrid search adds the two signals' min-max-normalized scores
with weights tuned on Check-COVID's train claims (see bench/retrieval_quality.py).

A search looks the collection up once (another process may have deleted it) and reads its
revision, asks Chroma for the nearest passages' distances only, takes each passage's document
from the BM25 index (built from the same passages), and fetches text and metadata for the k
passages it returns: see bench/query_latency.py for what each costs.

Revisions: an ingestion marks the collection ``pending-…`` before it writes its first passage
and gives it a new revision when done, so a BM25 index whose revision is the collection's
(and was checked against the passage count when loaded) holds exactly its passages. While a
revision is pending (an ingestion running in another process, or one that was cut short)
every search also compares the passage count, which costs a scan of the collection.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from chromadb.errors import NotFoundError
from filelock import FileLock

from corpora.base import Passage
from pipelines.core.config import AppSettings
from pipelines.core.errors import StoreUnavailableError, UnknownCorpusError
from pipelines.run.tools.embeddings import Embedder, passage_embedder
from pipelines.run.tools.fusion import min_max, ranked
from pipelines.run.tools.lexical import LexicalIndex, passage_tokens

COLLECTION_PREFIX = "dd_"
_NAME_OK = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")

PENDING = "pending-"  # revision prefix while an ingestion is writing (or was cut short)

SearchMode = Literal["hybrid", "dense", "lexical"]
SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "dense", "lexical")
CANDIDATES = 100  # passages each signal proposes before fusion (about 50 documents)
# Weights of the normalized signals in hybrid search. Tuned on Check-COVID train claims:
# equal weights beat every other pair on the grid, and weighted sums beat reciprocal rank fusion.
HYBRID_WEIGHTS = {"dense": 1.0, "lexical": 1.0}
# An ingestion writes this many passages a batch (Chroma takes at most about 5,000 at once). Within a batch the
# passages are embedded in order of length, so an embedder that pads its own batches pads little: torch's batches
# of 64 over bench/ingest_speed.py's 2,000 passages come to 1.21x their tokens in write batches of 256, 1.03x in
# batches of 2,048. (ONNX Runtime embeds each text on its own and pads nothing.)
WRITE_BATCH = 2048
EMBED_STEP = 256  # texts an embedder call gets during an ingestion: the progress bar moves after each


@dataclass(frozen=True)
class Hit:
    """A document found for a query: its best passage, the ranking score, and every signal's score.

    ``scores`` holds ``dense`` (cosine, -1..1), ``lexical`` (BM25, 0 = no query word) and,
    in hybrid search, ``fused`` (0..1), each for this passage where the signal saw it.
    """

    passage: Passage
    score: float
    scores: dict[str, float]


@dataclass
class _Candidates:
    """What one or more queries found: per-passage signal scores and the passages themselves."""

    dense: dict[str, float] = field(default_factory=dict)
    lexical: dict[str, float] = field(default_factory=dict)
    rows: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    doc_of: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class IngestReport:
    corpus: str
    documents: int
    passages: int
    added: int
    already_present: int


@dataclass(frozen=True)
class DocumentSummary:
    """One document of a corpus as a listing shows it: its id, title, file or source, web address and passage count."""

    id: str
    title: str
    source: str
    url: str | None
    passages: int


@dataclass(frozen=True)
class DeletionReport:
    corpus: str
    documents: int  # how many of the asked-for documents were found and removed
    passages: int
    corpus_removed: bool  # no document was left, so the corpus went too (a corpus is never empty)


def validate_corpus_name(name: str) -> str:
    """Corpus names become collection names: lowercase letters, digits, '.', '_' and '-'."""
    cleaned = name.strip().lower()
    if not _NAME_OK.match(cleaned):
        raise ValueError(f"corpus name {name!r}: use 1-63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
    if ".." in cleaned or not cleaned[-1].isalnum():  # the index's collection names allow neither (nor a path would)
        raise ValueError(f"corpus name {name!r}: no two dots in a row, and end with a letter or digit")
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
        from pipelines.run.tools.embeddings import default_embedder

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


@contextmanager
def _plain_disk_faults(path: Path) -> Iterator[None]:
    """A full disk or a read-only folder met by Chroma (whose errors carry SQLite's words) said plainly, naming the folder."""
    try:
        yield
    except StoreUnavailableError:
        raise
    except Exception as exc:
        text = str(exc).lower()
        if "disk is full" in text or "no space" in text or getattr(exc, "errno", None) == errno.ENOSPC:
            raise StoreUnavailableError(
                f"the disk holding the corpus index at {path} is full; nothing was changed. Free some space, then try again"
            ) from exc
        if "readonly" in text or "read-only" in text or getattr(exc, "errno", None) in (errno.EROFS, errno.EACCES):
            raise StoreUnavailableError(
                f"the corpus index at {path} cannot be written (its folder is read-only or not ours); nothing was changed"
            ) from exc
        raise


class CorpusIndex:
    """Named corpora of passages, with ingestion that never duplicates and search by meaning."""

    def __init__(self, settings: AppSettings, embedder: Embedder, query_embedder: Embedder | None = None) -> None:
        """``embedder`` embeds passages as they are ingested; ``query_embedder`` (default: the same) embeds queries.

        The app gives queries the cached embedder, so a repeated query (a re-run claim, a
        repeated evaluation) costs no model pass, while passage vectors, which Chroma keeps
        anyway, stay out of the cache.
        """
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        if settings.chroma_url:
            secure = settings.chroma_url.startswith("https://")
            host, _, port = settings.chroma_url.removeprefix("http://").removeprefix("https://").rstrip("/").partition(":")
            self._client = chromadb.HttpClient(host=host, port=int(port or (443 if secure else 8000)), ssl=secure, settings=chroma_settings)
        else:
            path = settings.data_dir / "chroma"
            path.mkdir(parents=True, exist_ok=True)
            # Processes opening a new store at once race in Chroma's own schema creation ("table collections
            # already exists"): they open it one at a time.
            with FileLock(str(settings.data_dir / "chroma.open.lock")), _plain_disk_faults(path):
                self._client = chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        self._embedder = embedder
        self._precision = settings.passage_precision
        self._passage_encoder: Embedder | None = None  # what embeds ingested passages: made on the first ingestion
        self._query_embedder = query_embedder or embedder
        self._ef = _ChromaEmbeddingFunction(embedder)
        self._lock = threading.RLock()
        self._data_dir = settings.data_dir
        self._lexical: dict[str, LexicalIndex] = {}

    @property
    def embedder(self) -> Embedder:
        """The float encoder: queries, and every similarity outside the index (sentences, novelty, relevance)."""
        return self._embedder

    @property
    def passage_embedder(self) -> Embedder:
        """What embeds the passages an ingestion adds (int8 weights by default: ``AppSettings.passage_precision``)."""
        if self._passage_encoder is None:
            self._passage_encoder = passage_embedder(self._embedder, self._precision)
        return self._passage_encoder

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
        return self._find(corpus) is not None

    def count(self, corpus: str) -> int:
        col = self._find(corpus)
        return col.count() if col is not None else 0

    def ingest(
        self, corpus: str, passages: Iterable[Passage], batch_size: int = WRITE_BATCH, progress: Callable[[int, int], None] | None = None
    ) -> IngestReport:
        """Add passages, all or nothing; a document ingested again replaces its old passages; re-ingesting is safe.

        Passages are written ``batch_size`` at a time. Within a batch they are embedded in order of
        length (so the embedder's own batches pad little), EMBED_STEP at a time, and written in
        their own order. ``progress(done, total)`` is called with the passages embedded or found
        present so far, after each step (the CLI's and the Corpora page's progress bars).

        Every passage is read (and every file checked) before the first is written, so a file
        refused at line 301 leaves nothing searchable and a refused first ingestion leaves no
        empty corpus behind. Ingestions of one corpus take turns (a lock file in the data
        folder), and the document count is counted from the collection, never added up, so
        several processes ingesting the same files count each document once.
        """
        corpus = validate_corpus_name(corpus)
        wanted = list(passages)  # a loader that refuses a file raises here, before anything is written
        if not wanted:  # a 0-document corpus would then be "unknown" to a run: refused before it is made
            raise ValueError("the files hold no text to index (empty, blank or only markup).")
        with self._lock, corpus_lock(self._data_dir, corpus):
            existed = self._find(corpus) is not None
            try:
                report = self._ingest(corpus, wanted, batch_size, progress)
            except BaseException:
                if not existed:  # a first ingestion that failed midway leaves no half corpus
                    self._drop(corpus)
                raise
        return report

    def _ingest(self, corpus: str, passages: list[Passage], batch_size: int, progress: Callable[[int, int], None] | None) -> IngestReport:
        col = self._collection(corpus, create=True)
        added = present = 0
        docs = {p.doc_id for p in passages}
        for start in range(0, len(passages), batch_size):

            def done(count: int, start: int = start) -> None:
                if progress is not None:
                    progress(start + count, len(passages))

            a, p = self._add_batch(corpus, col, passages[start : start + batch_size], marked=added > 0, done=done)
            added, present = added + a, present + p
        removed = self._remove_stale(col, docs, {p.id for p in passages})
        meta = dict(self._collection(corpus).metadata or {})
        if added or removed or not str(meta.get("revision", "")) or str(meta["revision"]).startswith(PENDING):
            # Tells every process its BM25 index is stale; also finishes an ingestion cut short whose passages are all in now.
            meta["revision"] = uuid.uuid4().hex[:12]
            col.modify(metadata=_writable_metadata(meta))
        col = self._collection(corpus)
        index = self._lexical_index(corpus, col, _revision_of(col))  # rebuilt now, so the first search is fast
        meta = dict(col.metadata or {})
        meta["documents"] = len(set(index.doc_ids))  # counted, not added up: the same file twice is one document
        col.modify(metadata=_writable_metadata(meta))
        return IngestReport(corpus=corpus, documents=len(docs), passages=len(passages), added=added, already_present=present)

    def _remove_stale(self, col: Any, docs: set[str], keep: set[str]) -> int:
        """Delete the passages of ``docs`` that this ingestion did not bring (an edited file replaces its old version)."""
        if not docs:
            return 0
        stale: list[str] = []
        names = sorted(docs)
        for start in range(0, len(names), 500):
            got = col.get(where={"doc_id": {"$in": names[start : start + 500]}}, include=[])
            stale += [pid for pid in got["ids"] if pid not in keep]
        if stale:
            col.delete(ids=stale)
        return len(stale)

    def _drop(self, corpus: str) -> None:
        with suppress(NotFoundError, ValueError):
            self._client.delete_collection(COLLECTION_PREFIX + corpus)
        self._lexical.pop(corpus, None)
        shutil.rmtree(self._lexical_dir(corpus), ignore_errors=True)

    def search(self, corpus: str, query: str | Sequence[str], k: int = 3, mode: SearchMode = "hybrid") -> list[Hit]:
        """The ``k`` best documents for ``query``, best first, each as its best passage.

        ``mode``: hybrid (meaning and words fused), dense (meaning) or lexical (words).
        Several queries (a claim and its rewrites, say) are searched at once: a document's
        score is the sum of its scores over the queries.
        """
        if mode not in SEARCH_MODES:
            raise ValueError(f"unknown search mode {mode!r}; choose one of: {', '.join(SEARCH_MODES)}")
        queries = [query] if isinstance(query, str) else [q for q in query if q.strip()]
        try:
            return self._search(corpus, queries, k, mode)
        except NotFoundError:  # another process deleted the corpus while we searched it
            raise UnknownCorpusError(corpus, list(self.corpora())) from None

    def _search(self, corpus: str, queries: list[str], k: int, mode: SearchMode) -> list[Hit]:
        col = self._existing(corpus)  # looked up in every search: another process may ingest or delete at any time
        if not queries:
            return []
        index = self._lexical_index(corpus, col, _revision_of(col))
        count = len(index.ids)  # the collection's passages: checked against its count when the index was loaded
        if count == 0:
            return []
        doc_scores: dict[str, float] = {}
        passage_scores: dict[str, float] = {}
        found = _Candidates()
        vectors = self._query_embedder.embed(queries) if mode != "lexical" else None
        for number, text in enumerate(queries):
            one = _Candidates()
            if vectors is not None:
                self._dense_candidates(col, count, index, vectors[number], one)
            if mode != "dense":
                self._lexical_candidates(index, text, one)
            docs, passages = _score(one, mode)
            for doc, value in docs.items():
                doc_scores[doc] = doc_scores.get(doc, 0.0) + value
            for pid, value in passages.items():
                if value > passage_scores.get(pid, float("-inf")):
                    passage_scores[pid] = value
                    found.dense[pid] = one.dense.get(pid, found.dense.get(pid, float("nan")))
                    found.lexical[pid] = one.lexical.get(pid, found.lexical.get(pid, 0.0))
            found.doc_of.update(one.doc_of)
        best_passage: dict[str, str] = {}
        for pid, value in passage_scores.items():
            doc = found.doc_of[pid]
            if doc not in best_passage or (value, pid) > (passage_scores[best_passage[doc]], best_passage[doc]):
                best_passage[doc] = pid
        chosen = [best_passage[doc] for doc in ranked(doc_scores)[:k]]
        self._fetch_rows(col, chosen, found, vectors[0] if vectors is not None and len(queries) == 1 else None)
        hits = []
        for pid in chosen:
            meta, text = found.rows[pid]
            scores: dict[str, float] = {}
            if mode != "lexical" and not np.isnan(found.dense.get(pid, float("nan"))):
                scores["dense"] = round(float(found.dense[pid]), 4)
            if mode != "dense":
                scores["lexical"] = round(float(found.lexical.get(pid, 0.0)), 4)
            score = round(doc_scores[found.doc_of[pid]] / len(queries), 4)
            if mode == "hybrid":
                scores["fused"] = score
            hits.append(Hit(passage=_passage_from(pid, meta, text), score=score if mode == "hybrid" else scores[mode], scores=scores))
        return hits

    def document(self, corpus: str, doc_id: str) -> list[Passage]:
        """Every passage of one document, in order (empty when the corpus has no such document)."""
        try:
            col = self._existing(corpus)
            got = col.get(where={"doc_id": doc_id}, include=["documents", "metadatas"])
        except NotFoundError:
            raise UnknownCorpusError(corpus, list(self.corpora())) from None
        passages = [
            _passage_from(pid, meta or {}, text or "")
            for pid, meta, text in zip(got["ids"], got.get("metadatas") or [], got.get("documents") or [], strict=False)
        ]
        return sorted(passages, key=lambda p: p.index)

    def documents(self, corpus: str) -> list[DocumentSummary]:
        """Every document of a corpus with its passage count, by title (read from the passages' metadata)."""
        col = self._existing(corpus)
        found: dict[str, tuple[dict[str, Any], int]] = {}
        page = 2000
        for offset in range(0, col.count(), page):
            got = col.get(include=["metadatas"], limit=page, offset=offset)
            for pid, meta in zip(got["ids"], got.get("metadatas") or [], strict=False):
                meta = meta or {}
                doc = str(meta.get("doc_id", pid))
                first, count = found.get(doc, (meta, 0))
                found[doc] = (first, count + 1)
        summaries = [
            DocumentSummary(
                id=doc,
                title=str(meta.get("title") or doc),
                source=str(meta.get("source") or ""),
                url=str(meta.get("url") or "") or None,
                passages=count,
            )
            for doc, (meta, count) in found.items()
        ]
        return sorted(summaries, key=lambda d: (d.title.lower(), d.id))

    def delete_documents(self, corpus: str, doc_ids: Iterable[str]) -> DeletionReport:
        """Remove documents (every passage of each) from a corpus, with the same revision protocol as an ingestion,
        so other processes' BM25 indexes go stale at once. Removing the last document removes the corpus."""
        corpus = validate_corpus_name(corpus)
        wanted = sorted(set(doc_ids))
        with self._lock, corpus_lock(self._data_dir, corpus):
            col = self._existing(corpus)
            ids: list[str] = []
            docs: set[str] = set()
            for start in range(0, len(wanted), 500):
                got = col.get(where={"doc_id": {"$in": wanted[start : start + 500]}}, include=["metadatas"])
                ids += got["ids"]
                docs |= {str((meta or {}).get("doc_id")) for meta in got.get("metadatas") or []}
            if not ids:
                return DeletionReport(corpus, 0, 0, corpus_removed=False)
            if len(ids) >= col.count():
                self._drop(corpus)
                return DeletionReport(corpus, len(docs), len(ids), corpus_removed=True)
            meta = dict(col.metadata or {})
            meta["revision"] = PENDING + uuid.uuid4().hex[:12]  # readers stop trusting their BM25 index before it goes stale
            col.modify(metadata=_writable_metadata(meta))
            col.delete(ids=ids)
            meta["revision"] = uuid.uuid4().hex[:12]
            col.modify(metadata=_writable_metadata(meta))
            col = self._collection(corpus)
            index = self._lexical_index(corpus, col, _revision_of(col))  # rebuilt now, so the next search is fast
            meta = dict(col.metadata or {})
            meta["documents"] = len(set(index.doc_ids))
            col.modify(metadata=_writable_metadata(meta))
        return DeletionReport(corpus, len(docs), len(ids), corpus_removed=False)

    def delete(self, corpus: str) -> None:
        """Remove a corpus: its Chroma collection and its BM25 index."""
        if not self.has(corpus):
            raise UnknownCorpusError(corpus, list(self.corpora()))
        with self._lock:
            self._client.delete_collection(COLLECTION_PREFIX + corpus)
            self._lexical.pop(corpus, None)
            shutil.rmtree(self._lexical_dir(corpus), ignore_errors=True)

    def lexical_path(self, corpus: str) -> Path:
        """Where the corpus's BM25 index is kept (beside the Chroma store, in the data folder)."""
        return self._lexical_dir(corpus)

    def _find(self, corpus: str) -> Any | None:
        """The corpus's collection as it is now, or None: one lookup, not a listing of every corpus."""
        if not _NAME_OK.match(corpus):
            return None  # no collection can have this name (and Chroma would refuse it)
        try:
            return self._collection(corpus)
        except NotFoundError:
            return None

    def _existing(self, corpus: str) -> Any:
        col = self._find(corpus)
        if col is None:
            raise UnknownCorpusError(corpus, list(self.corpora()))
        return col

    def _dense_candidates(self, col: Any, count: int, index: LexicalIndex, vector: np.ndarray, into: _Candidates) -> None:
        """The nearest passages' cosines; their documents come from the BM25 index, their text later (only the k kept)."""
        result = col.query(query_embeddings=[vector.tolist()], n_results=max(1, min(CANDIDATES, count)), include=["distances"])
        distances = (result.get("distances") or [[]])[0]
        position = index.position
        unknown = []
        for pid, distance in zip(result["ids"][0], distances, strict=True):
            into.dense[pid] = 1.0 - float(distance)
            row = position.get(pid)
            if row is None:
                unknown.append(pid)
            else:
                into.doc_of[pid] = index.doc_ids[row]
        if unknown:  # passages written after our BM25 index was built: another process is ingesting (the revision is pending)
            got = col.get(ids=unknown, include=["metadatas"])
            for pid, meta in zip(got["ids"], got.get("metadatas") or [], strict=False):
                into.doc_of[pid] = str((meta or {}).get("doc_id", pid))

    def _lexical_candidates(self, index: LexicalIndex, query: str, into: _Candidates) -> None:
        scores = index.scores(query)
        if not len(scores):
            return
        for i in index.top(scores, CANDIDATES):
            pid = index.ids[i]
            into.lexical[pid] = float(scores[i])
            into.doc_of[pid] = index.doc_ids[i]
        # A passage the dense side proposed still gets its BM25 score (0 when no query word occurs).
        position = index.position
        for pid in into.dense:
            if pid not in into.lexical and pid in position:
                into.lexical[pid] = float(scores[position[pid]])

    def _fetch_rows(self, col: Any, chosen: list[str], found: _Candidates, vector: np.ndarray | None) -> None:
        """Fetch the chosen passages' text and metadata, and the cosine to a single query of those only BM25 proposed."""
        if not chosen:
            return
        need_vectors = vector is not None and any(np.isnan(found.dense.get(pid, np.nan)) for pid in chosen)
        got = col.get(ids=chosen, include=["documents", "metadatas", "embeddings"] if need_vectors else ["documents", "metadatas"])
        embeddings = got.get("embeddings") if need_vectors else None
        for i, pid in enumerate(got["ids"]):
            found.rows[pid] = ((got.get("metadatas") or [{}])[i] or {}, (got.get("documents") or [""])[i] or "")
            if vector is not None and embeddings is not None and len(embeddings) > i and np.isnan(found.dense.get(pid, np.nan)):
                found.dense[pid] = float(np.dot(np.asarray(embeddings[i], dtype=np.float32), vector))
        if any(pid not in found.rows for pid in chosen):
            raise NotFoundError(f"passages of {col.name} vanished during the search")  # the corpus was deleted meanwhile

    def _lexical_dir(self, corpus: str) -> Path:
        return self._data_dir / "bm25" / corpus

    def _lexical_index(self, corpus: str, col: Any, revision: str) -> LexicalIndex:
        """The corpus's BM25 index: cached, loaded from disk, or rebuilt when missing or stale.

        ``revision`` is the collection's, read by the caller in this search. An index of that
        revision is used as it is, except while the revision is pending (an ingestion is
        writing, or was cut short): then its passage count is compared every time, as it is
        whenever an index is loaded, so an index of other passages is never used.
        """
        index = self._lexical.get(corpus)
        if index is not None and index.revision == revision and not (revision.startswith(PENDING) and len(index.ids) != col.count()):
            return index
        with self._lock:
            count = col.count()
            index = LexicalIndex.load(self._lexical_dir(corpus))
            if index is None or index.revision != revision or len(index.ids) != count:
                index = self._rebuild_lexical(corpus, col, revision)
            self._lexical[corpus] = index
        return index

    def _rebuild_lexical(self, corpus: str, col: Any, revision: str) -> LexicalIndex:
        """BM25 over every passage in the collection (the collection is the source of truth)."""
        ids: list[str] = []
        doc_ids: list[str] = []
        tokens: list[list[str]] = []
        page = 2000
        for offset in range(0, col.count(), page):
            got = col.get(include=["documents", "metadatas"], limit=page, offset=offset)
            for pid, meta, text in zip(got["ids"], got.get("metadatas") or [], got.get("documents") or [], strict=False):
                meta = meta or {}
                ids.append(pid)
                doc_ids.append(str(meta.get("doc_id", pid)))
                tokens.append(passage_tokens(str(meta.get("title", "")), text or ""))
        index = LexicalIndex.build(ids, doc_ids, tokens, revision)
        index.save(self._lexical_dir(corpus))
        return index

    def _collection(self, corpus: str, create: bool = False) -> Any:
        name = COLLECTION_PREFIX + corpus
        if create:
            return self._client.get_or_create_collection(
                name=name,
                embedding_function=self._ef,  # type: ignore[arg-type]
                # One thread inserts into the HNSW graph: with several, the graph (and so the tail of the 100 dense
                # candidates that hybrid scores are normalised over) depends on thread scheduling; one thread builds the
                # same graph from the same passages. Insertion is a small part of an ingestion's time beside embedding.
                metadata={"hnsw:space": "cosine", "hnsw:num_threads": 1, "corpus": corpus},
            )
        return self._client.get_collection(name=name, embedding_function=self._ef)  # type: ignore[arg-type]

    def _add_batch(
        self, corpus: str, col: Any, batch: list[Passage], marked: bool, done: Callable[[int], None] | None = None
    ) -> tuple[int, int]:
        """Write the batch's new or changed passages; before the ingestion's first write (not ``marked`` yet), mark the revision pending.

        ``done(count)``: how many of the batch's passages are embedded or found present so far.
        """
        unique = {p.id: p for p in batch}
        ids = list(unique)
        existing = col.get(ids=ids, include=["metadatas"])
        known = {pid: (meta or {}).get("text_hash") for pid, meta in zip(existing["ids"], existing["metadatas"] or [], strict=False)}
        fresh = [p for p in unique.values() if known.get(p.id) != _text_hash(p)]
        if fresh:
            if not marked:
                meta = dict(self._collection(corpus).metadata or {})
                meta["revision"] = PENDING + uuid.uuid4().hex[:12]  # readers stop trusting their BM25 index before it goes stale
                col.modify(metadata=_writable_metadata(meta))
            present = len(batch) - len(fresh)  # the last step reports the whole batch
            vectors = self._embed_by_length([p.indexed_text for p in fresh], lambda count: done(present + count) if done else None)
            col.upsert(
                ids=[p.id for p in fresh],
                embeddings=vectors,
                documents=[p.text for p in fresh],
                metadatas=[_metadata_of(p) for p in fresh],
            )
        elif done is not None:  # nothing to embed: the whole batch was present already
            done(len(batch))
        return len(fresh), len(unique) - len(fresh)

    def _embed_by_length(self, texts: list[str], done: Callable[[int], object]) -> np.ndarray:
        """Vectors of ``texts`` in their order, embedded shortest first in about EMBED_STEP at a time (``done(count)`` after each)."""
        order = np.argsort([len(t) for t in texts], kind="stable")
        embedder = self.passage_embedder
        vectors = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
        count = 0
        # Steps of equal size: a last step of a few texts would cost the embedder a call of its own (a one-thread session).
        for rows in np.array_split(order, -(-len(texts) // EMBED_STEP)):
            vectors[rows] = embedder.embed([texts[i] for i in rows])
            count += len(rows)
            done(count)
        return vectors


@contextmanager
def corpus_lock(data_dir: Path, corpus: str) -> Iterator[None]:
    """Ingestions of one corpus take turns, across processes (an exclusive lock on a file in the data folder).

    With a shared Chroma server the lock covers the processes that share this data folder;
    the document count is counted from the collection either way.
    """
    folder = data_dir / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"ingest-{corpus}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _score(found: _Candidates, mode: SearchMode) -> tuple[dict[str, float], dict[str, float]]:
    """Ranking scores for one query: per document (its best passage, max aggregation) and per passage.

    Hybrid scores are the weighted sum of each signal's min-max-normalized score, divided by
    the weights' total so they run 0..1; a document a signal did not propose gets 0 from it.
    """
    if mode == "dense":
        passages = dict(found.dense)
    elif mode == "lexical":
        passages = {pid: value for pid, value in found.lexical.items() if value > 0}
    else:
        total = sum(HYBRID_WEIGHTS.values())
        docs: dict[str, float] = {}
        for name, per_passage in (("dense", found.dense), ("lexical", {p: v for p, v in found.lexical.items() if v > 0})):
            best: dict[str, float] = {}
            for pid, value in per_passage.items():
                doc = found.doc_of[pid]
                best[doc] = max(value, best.get(doc, float("-inf")))
            for doc, value in min_max(best).items():
                docs[doc] = docs.get(doc, 0.0) + HYBRID_WEIGHTS[name] * value / total
        passages = {}
        for name, per_passage in (("dense", found.dense), ("lexical", found.lexical)):
            for pid, value in min_max(per_passage).items():
                passages[pid] = passages.get(pid, 0.0) + HYBRID_WEIGHTS[name] * value / total
        return docs, passages
    docs = {}
    for pid, value in passages.items():
        doc = found.doc_of[pid]
        docs[doc] = max(value, docs.get(doc, float("-inf")))
    return docs, passages


def _revision_of(col: Any) -> str:
    """The collection's revision marker (changed by every ingestion that adds or changes passages)."""
    return str((col.metadata or {}).get("revision", ""))


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
