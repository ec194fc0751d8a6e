"""Lexical search: BM25 (bm25s) over stemmed words, one index per corpus, kept in the data folder.

The index is derived from the passages in the Chroma collection, so it can always be rebuilt
from them: after an ingestion, when its files are missing (a data folder from before lexical
search existed) or stale (another process ingested). It is small: a sparse matrix and a vocabulary.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import bm25s
import numpy as np
from Stemmer import Stemmer

from pipelines.core.text.stopwords import STOPWORDS

FORMAT_VERSION = 2  # bump when tokenization changes: older indexes are rebuilt on first use (2: PyStemmer, bm25s stopwords)
TITLE_WEIGHT = 1  # the title is indexed with every passage of its document (tuned on Check-COVID train: 2 and 3 were worse)
_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")

_STEMMER = Stemmer("porter")  # PyStemmer, the stemmer bm25s is built around; Porter's original algorithm


def tokenize(text: str) -> list[str]:
    """Lowercase words without stopwords, Porter-stemmed; hyphenated terms are kept whole and in parts."""
    tokens: list[str] = []
    for word in _TOKEN.findall(text.lower().replace("’", "'")):
        word = word.removesuffix("'s")
        if "-" in word:
            parts = word.split("-")
            tokens.extend(_STEMMER.stemWords([p for p in parts if p not in STOPWORDS]))
            tokens.append(_STEMMER.stemWord("".join(parts)))  # "pre-symptomatic" also matches "presymptomatic", "SARS-CoV-2" "SARSCoV2"
        elif word not in STOPWORDS:
            tokens.append(_STEMMER.stemWord(word))
    return tokens


def passage_tokens(title: str, text: str) -> list[str]:
    """What BM25 indexes for a passage: the title (weighted) and the passage text."""
    return tokenize(title) * TITLE_WEIGHT + tokenize(text)


@dataclass
class LexicalIndex:
    """BM25 over one corpus's passages; ``scores`` lines up with ``ids``."""

    ids: list[str]
    doc_ids: list[str]
    revision: str
    _bm25: object

    K1 = 1.2
    B = 0.75

    @classmethod
    def build(cls, ids: Sequence[str], doc_ids: Sequence[str], tokens: Sequence[list[str]], revision: str) -> LexicalIndex:

        bm25 = bm25s.BM25(k1=cls.K1, b=cls.B)
        if ids:
            bm25.index([t or ["\u2205"] for t in tokens], show_progress=False)
        return cls(ids=list(ids), doc_ids=list(doc_ids), revision=revision, _bm25=bm25)

    @cached_property
    def position(self) -> dict[str, int]:
        """Passage id -> its row in ``scores``."""
        return {pid: i for i, pid in enumerate(self.ids)}

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage for ``query`` (zeros when no query word is in the corpus)."""
        if not self.ids:
            return np.zeros(0, dtype=np.float32)
        bm25 = self._bm25
        vocab = bm25.vocab_dict  # type: ignore[attr-defined]
        tokens = [vocab[w] for w in tokenize(query) if w in vocab]
        if not tokens:
            return np.zeros(len(self.ids), dtype=np.float32)
        if bm25.nonoccurrence_array is not None:  # type: ignore[attr-defined]  # BM25L/BM25+: not ours, keep the library's path
            return np.asarray(bm25.get_scores(tokens), dtype=np.float32)  # type: ignore[attr-defined]
        # bm25s's get_scores sums each word's postings with np.add.at, slow on long postings; a
        # word's postings name each passage once, so a plain indexed add gives the same floats.
        matrix = bm25.scores  # type: ignore[attr-defined]
        data, indices, indptr = matrix["data"], matrix["indices"], matrix["indptr"]
        total = np.zeros(matrix["num_docs"], dtype=np.dtype(bm25.dtype))  # type: ignore[attr-defined]
        for token in tokens:
            start, end = indptr[token], indptr[token + 1]
            total[indices[start:end]] += data[start:end]
        return total.astype(np.float32, copy=False)

    @staticmethod
    def top(scores: np.ndarray, n: int) -> np.ndarray:
        """Rows of the ``n`` best positive scores, best first, ties in row order (as a stable sort of all rows).

        Only the scores at or above the n-th best are sorted: at 100,000 passages that is
        about a hundred, not all of them.
        """
        rows = np.flatnonzero(scores > 0)
        if len(rows) > n:
            values = scores[rows]
            nth_best = np.partition(values, len(values) - n)[len(values) - n]
            rows = rows[values >= nth_best]  # ties at the n-th best may add a few; the sort below keeps the first in row order
        return rows[np.argsort(-scores[rows], kind="stable")][:n]

    def save(self, folder: Path) -> None:
        """Write to a fresh folder, then swap it in, so a reader never sees half an index."""
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if self.ids:
            self._bm25.save(str(tmp), show_progress=False)  # type: ignore[attr-defined]
        meta = {"version": FORMAT_VERSION, "revision": self.revision, "ids": self.ids, "doc_ids": self.doc_ids}
        (tmp / "passages.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)

    @classmethod
    def load(cls, folder: Path) -> LexicalIndex | None:
        """The saved index, or None when there is none or it was written by an older version."""

        try:
            meta = json.loads((folder / "passages.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if meta.get("version") != FORMAT_VERSION:
            return None
        bm25 = bm25s.BM25.load(str(folder), show_progress=False) if meta["ids"] else bm25s.BM25()
        return cls(ids=meta["ids"], doc_ids=meta["doc_ids"], revision=str(meta.get("revision", "")), _bm25=bm25)
