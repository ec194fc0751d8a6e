"""What a corpus is made of: documents split into sentences, and the passages built from them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class Document:
    """One source document: its sentences are kept so a passage can say which it quotes."""

    id: str
    title: str
    sentences: tuple[str, ...]
    source: str = ""
    url: str | None = None

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass(frozen=True)
class Passage:
    """A few consecutive sentences of a document, the unit that is indexed and retrieved."""

    id: str
    doc_id: str
    title: str
    text: str
    index: int
    sentence_indices: tuple[int, ...]
    source: str = ""
    url: str | None = None

    @property
    def indexed_text(self) -> str:
        """What is embedded and searched: the title first, so a passage keeps its context."""
        return f"{self.title}. {self.text}" if self.title else self.text


class CorpusLoader(Protocol):
    """Anything that yields documents: the demo corpus, Check-COVID, a user's files."""

    name: str

    def load_documents(self) -> Iterator[Document]: ...


def split_sentences(text: str) -> tuple[str, ...]:
    """Sentences of plain text; paragraphs and line breaks also end a sentence."""
    sentences: list[str] = []
    for block in re.split(r"\n\s*\n|\r?\n(?=[-*#•]|\d+\.)", text):
        block = " ".join(block.split())
        sentences.extend(s.strip() for s in _SENTENCE_END.split(block) if s.strip())
    return tuple(sentences)
