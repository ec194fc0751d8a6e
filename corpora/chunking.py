"""Split documents into overlapping passages of a few sentences, keeping sentence indices."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from corpora.base import Document, Passage

DEFAULT_SENTENCES = 3
DEFAULT_OVERLAP = 1
MAX_PASSAGE_CHARS = 1500


def chunk_document(doc: Document, sentences: int = DEFAULT_SENTENCES, overlap: int = DEFAULT_OVERLAP) -> Iterator[Passage]:
    """Passages of ``sentences`` sentences, each sharing ``overlap`` with the one before.

    A very long sentence (a table flattened into text, say) is cut so no passage exceeds
    MAX_PASSAGE_CHARS: the embedder reads only the first few hundred words anyway.
    """
    if sentences < 1 or not 0 <= overlap < sentences:
        raise ValueError(f"need sentences >= 1 and 0 <= overlap < sentences, got {sentences}, {overlap}")
    step = sentences - overlap
    count = len(doc.sentences)
    starts = range(0, max(count - overlap, 1), step) if count else range(0)
    for index, start in enumerate(starts):
        indices = tuple(range(start, min(start + sentences, count)))
        text = " ".join(doc.sentences[i] for i in indices)
        yield Passage(
            id=f"{doc.id}#p{index}",
            doc_id=doc.id,
            title=doc.title,
            text=text[:MAX_PASSAGE_CHARS],
            index=index,
            sentence_indices=indices,
            source=doc.source,
            url=doc.url,
        )


def chunk_documents(docs: Iterable[Document], sentences: int = DEFAULT_SENTENCES, overlap: int = DEFAULT_OVERLAP) -> Iterator[Passage]:
    for doc in docs:
        yield from chunk_document(doc, sentences, overlap)
