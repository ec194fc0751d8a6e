"""Frozen evidence: a stored run's evidence as the only source of a new run (a re-run with another protocol or model).

``FrozenIndex`` and ``FrozenWeb`` stand in for the corpus index and the web search: every
search is answered from the items the source run retrieved (corpus passages, web results and
what its checker pasted), ranked by BM25 on the query and filled up with the rest in their
stored order, so the new run sees the same evidence whatever it asks. Nothing is searched
anew and nothing can be added to the frozen corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from corpora.base import Passage
from pipelines.core.domain import Evidence
from pipelines.core.errors import DebateDeskError
from pipelines.run.tools.corpus_index import CorpusIndex, DeletionReport, DocumentSummary, Hit, IngestReport, SearchMode
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.lexical import LexicalIndex, passage_tokens
from pipelines.run.tools.web import WebResult


class FrozenEvidenceError(DebateDeskError):
    """A frozen-evidence run was asked to change its evidence, or its source run has none."""


@dataclass(frozen=True)
class FrozenEvidence:
    """The evidence of a stored run (``source_run``), in the order it was found."""

    source_run: str
    items: tuple[Evidence, ...]

    @classmethod
    def of(cls, source_run: str, items: Iterable[Evidence]) -> FrozenEvidence:
        kept = tuple(items)
        if not kept:
            raise FrozenEvidenceError(f"run {source_run} has no evidence to re-run on (it retrieved nothing); run the claim anew instead")
        return cls(source_run=source_run, items=kept)

    @property
    def passages(self) -> list[Passage]:
        """Corpus passages and pasted items, as passages of their documents (a pasted item is a document of its own)."""
        return [_passage(e) for e in self.items if e.source != "web"]

    @property
    def web_results(self) -> list[WebResult]:
        return [WebResult(title=e.title, url=e.url or "", snippet=e.text) for e in self.items if e.source == "web"]

    def describe(self) -> str:
        web = len(self.web_results)
        return f"{len(self.items)} items of run {self.source_run} ({len(self.items) - web} corpus or pasted, {web} web)"


def _passage(e: Evidence) -> Passage:
    doc_id = e.doc_id or f"pasted-{e.id}"
    index = e.passage_index if e.passage_index is not None else 0
    return Passage(
        id=f"{doc_id}#p{index}",
        doc_id=doc_id,
        title=e.title,
        text=e.text,
        index=index,
        sentence_indices=e.sentence_indices,
        source=e.source,
        url=e.url,
    )


def _ranked(texts: Sequence[tuple[str, str]], queries: Sequence[str], k: int) -> list[tuple[int, float]]:
    """(row, BM25 score) of the ``k`` best rows for the queries summed, then the other rows in order to fill ``k``."""
    if not texts:
        return []
    index = LexicalIndex.build(
        [str(i) for i in range(len(texts))], [str(i) for i in range(len(texts))], [passage_tokens(t, b) for t, b in texts], "frozen"
    )
    total = sum((index.scores(q) for q in queries), start=index.scores(""))
    best = [(int(row), float(total[row])) for row in LexicalIndex.top(total, k)]
    chosen = {row for row, _ in best}
    rest = [(row, 0.0) for row in range(len(texts)) if row not in chosen]
    return (best + rest)[:k]


class FrozenIndex(CorpusIndex):
    """The corpus index of a re-run: the source run's passages, whatever corpus is named."""

    def __init__(self, evidence: FrozenEvidence, embedder: Embedder) -> None:  # no super().__init__: there is no Chroma behind it
        self._frozen = evidence
        self._passages = evidence.passages
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def corpora(self) -> dict[str, dict[str, int]]:
        return {}

    def has(self, corpus: str) -> bool:
        return True

    def count(self, corpus: str) -> int:
        return len(self._passages)

    def search(self, corpus: str, query: str | Sequence[str], k: int = 3, mode: SearchMode = "hybrid") -> list[Hit]:
        queries = [query] if isinstance(query, str) else [q for q in query if q.strip()]
        ranked = _ranked([(p.title, p.text) for p in self._passages], queries, k)
        return [Hit(passage=self._passages[row], score=score, scores={"lexical": score}) for row, score in ranked]

    def document(self, corpus: str, doc_id: str) -> list[Passage]:
        return sorted((p for p in self._passages if p.doc_id == doc_id), key=lambda p: p.index)

    def documents(self, corpus: str) -> list[DocumentSummary]:
        raise FrozenEvidenceError("a re-run on frozen evidence has no corpus to list")

    def ingest(
        self, corpus: str, passages: Iterable[Passage], batch_size: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> IngestReport:
        raise FrozenEvidenceError("a re-run on frozen evidence adds nothing to its evidence")

    def delete_documents(self, corpus: str, doc_ids: Iterable[str]) -> DeletionReport:
        raise FrozenEvidenceError("a re-run on frozen evidence deletes nothing")

    def delete(self, corpus: str) -> None:
        raise FrozenEvidenceError("a re-run on frozen evidence deletes nothing")

    def lexical_path(self, corpus: str) -> Path:
        raise FrozenEvidenceError("a re-run on frozen evidence has no index on disk")


class FrozenWeb:
    """The web search of a re-run: the source run's web results, never the network."""

    name = "frozen"

    def __init__(self, evidence: FrozenEvidence) -> None:
        self._results = evidence.web_results

    def search(self, query: str, k: int) -> list[WebResult]:
        ranked = _ranked([(r.title, r.snippet) for r in self._results], [query], k)
        return [self._results[row] for row, _ in ranked]
