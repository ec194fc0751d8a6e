"""Corpus index at scale: ingest rate and query latency of CorpusIndex as it is, at 10,000 and 100,000 passages.

    .venv/bin/python bench/retrieval.py [--sizes 10000,100000] [--queries 200] [--data-dir DIR]
        [--vectors minilm|hashed] [--baseline REF] [--reuse]

The passages are synthetic, and say so: sentences of 12-30 words drawn (seeded) from a
vocabulary of 5,000 made-up words with a Zipf-like frequency, 3 sentences a passage, so
embedding cost is like real abstracts' passages. Ingest goes through ``CorpusIndex.ingest``
(MiniLM embeddings on the CPU, then Chroma's HNSW), so passages/s is the whole cost of
adding a corpus (the BM25 index, rebuilt at the end of an ingestion, included). Queries
are 6-word phrases from the same vocabulary, timed through ``CorpusIndex.search`` in its
default hybrid mode, as the app searches (query embedding, HNSW search for 100 candidates,
BM25 scores over every passage, fusion, reading the hits); the embedding alone is timed
too, to show where the time goes. Every size gets a fresh Chroma folder.
Rerun it unchanged on a branch with another search to compare.

``--vectors hashed`` is for a busy machine, where MiniLM embeds only 10-30 passages a second
and 100,000 passages would take hours: passages (and the query vector the index is given)
get a stand-in vector instead (each word a fixed pseudo-random unit vector, a text the
normalized sum: microseconds a text), so ingest times Chroma and BM25 alone. Each timed
query still embeds the query with MiniLM first, then searches: the latency is MiniLM's
query embedding plus the whole index side (HNSW over the same number of 384-d vectors,
BM25 over every passage, fusion, reading the hits), as in the app; only which passages
come back differs.
``--baseline REF`` times the search at that git commit (``bench/baseline.py``) beside this
tree's on the same index, query by query in alternating order, and counts the queries whose
hits differ (0 expected). ``--reuse`` keeps an index already built in ``--data-dir`` for a
size (same passages: they are seeded) instead of ingesting again; its ingest columns are then
blank. Each row also gives the index side alone (the search without MiniLM's query
embedding) and MiniLM's query embedding alone, each timed, not subtracted.
Goal: p95 query latency under 50 ms at 100,000 passages.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.baseline import baseline_module, same_hits
from corpora.base import Passage
from pipelines.core.config import AppSettings
from pipelines.eval.metrics import percentile
from pipelines.run.tools.corpus_index import CorpusIndex
from pipelines.run.tools.embeddings import Embedder, default_embedder

GOAL_MS = 50.0
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pe", "dra", "gu", "zen", "fo", "bi", "lu", "tor", "can", "vir", "mas", "sel"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_words(vocab: list[str], rng: random.Random, count: int) -> list[str]:
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    return rng.choices(vocab, weights=weights, k=count)


def passages(n: int, vocab: list[str], seed: int) -> Iterator[Passage]:
    rng = random.Random(seed)
    for i in range(n):
        sentences = [" ".join(zipf_words(vocab, rng, rng.randint(12, 30))).capitalize() + "." for _ in range(3)]
        yield Passage(
            id=f"syn-{i // 4}#p{i % 4}", doc_id=f"syn-{i // 4}", title=f"Synthetic document {i // 4}",
            text=" ".join(sentences), index=i % 4, sentence_indices=(0, 1, 2), source="synthetic",
        )  # fmt: skip


class HashedWordEmbedder:
    """Stand-in vectors: each word a fixed pseudo-random unit vector, a text their normalized sum."""

    name = "hashed-words"
    dimension = 384

    def __init__(self) -> None:
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        if word not in self._words:
            vector = np.random.default_rng(zlib.crc32(word.encode())).standard_normal(self.dimension).astype(np.float32)
            self._words[word] = vector / np.linalg.norm(vector)
        return self._words[word]

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            total = np.sum([self._word(w) for w in text.lower().split()] or [np.ones(self.dimension, np.float32)], axis=0)
            rows.append(total / np.linalg.norm(total))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimension)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "debatedesk-bench-retrieval")
    parser.add_argument(
        "--vectors", choices=("minilm", "hashed"), default="minilm", help="passage vectors: MiniLM (default) or a fast stand-in (see above)"
    )
    parser.add_argument("--baseline", default=None, help="also time the search at this git commit or branch, on the same index")
    parser.add_argument("--reuse", action="store_true", help="keep an index already built in --data-dir for a size")
    args = parser.parse_args(argv)

    rng = random.Random(7)
    vocab = vocabulary(5000, rng)
    queries = [" ".join(zipf_words(vocab, rng, 6)) for _ in range(args.queries)]
    minilm = default_embedder()
    minilm.embed(["warm up the model"])
    embedder: Embedder = minilm if args.vectors == "minilm" else HashedWordEmbedder()
    vectors = (
        "MiniLM on the CPU" if args.vectors == "minilm" else "stand-in hashed-word vectors (each query still embedded by MiniLM, timed)"
    )
    old = baseline_module(args.baseline).CorpusIndex if args.baseline else None
    print(f"synthetic passages (3 sentences of 12-30 made-up words); {vectors}; Chroma embedded (HNSW, cosine) + BM25; hybrid search")
    print(
        f"{'passages':>9} {'search':<18} {'ingest s':>9} {'passages/s':>10} {'search p50 ms':>13} {'p95 ms':>7}"
        f" {'index side p50 ms':>17} {'p95 ms':>7} {'embed p50 ms':>12} {'p95 ms':>7}"
    )
    results = []
    load_start = os.getloadavg()
    for size in (int(s) for s in args.sizes.split(",")):
        folder = args.data_dir / f"n{size}"
        settings = AppSettings(data_dir=folder)
        ingest: float | None = None
        if not (args.reuse and CorpusIndex(settings, embedder).count("synthetic") == size):
            shutil.rmtree(folder, ignore_errors=True)
            index = CorpusIndex(settings, embedder)
            started = time.perf_counter()
            report = index.ingest("synthetic", passages(size, vocab, seed=size))
            ingest = time.perf_counter() - started
            assert report.added == size, report
        searches = {"this tree": CorpusIndex(settings, embedder)}
        if old is not None:
            searches = {f"before ({args.baseline})": old(settings, embedder), "after (this tree)": searches["this tree"]}
        for index in searches.values():
            for q in queries[:5]:
                index.search("synthetic", q, 3)  # warm the collection
        search_ms: dict[str, list[float]] = {name: [] for name in searches}
        index_ms: dict[str, list[float]] = {name: [] for name in searches}
        hits: dict[str, list[object]] = {name: [] for name in searches}
        embed_ms = []
        names = list(searches)
        for number, q in enumerate(queries):
            for name in names[number % len(names) :] + names[: number % len(names)]:
                t0 = time.perf_counter()
                if embedder is not minilm:
                    minilm.embed([q])  # the query embedding the app would pay, before the index's own (stand-in) one
                t1 = time.perf_counter()
                found = searches[name].search("synthetic", q, 3)
                t2 = time.perf_counter()
                search_ms[name].append((t2 - t0) * 1000)
                index_ms[name].append((t2 - t1) * 1000)
                hits[name].append(found)
                assert len(found) == 3
            t3 = time.perf_counter()
            minilm.embed([q])
            embed_ms.append((time.perf_counter() - t3) * 1000)
        e50, e95 = percentile(embed_ms, 50), percentile(embed_ms, 95)
        for name in names:
            p50, p95 = percentile(search_ms[name], 50), percentile(search_ms[name], 95)
            i50, i95 = percentile(index_ms[name], 50), percentile(index_ms[name], 95)
            results.append((size, name, p95))
            if ingest is None:
                ingest_cells = f"{'reused':>9} {'':>10}"
            elif name.startswith("before"):
                ingest_cells = f"{'-':>9} {'':>10}"  # the index is always built by this tree's ingest
            else:
                ingest_cells = f"{ingest:>9.1f} {size / ingest:>10.0f}"
            # With MiniLM passage vectors the index embeds the query itself, so its side cannot be timed apart.
            index_cells = f"{i50:>17.1f} {i95:>7.1f}" if embedder is not minilm else f"{'n/a':>17} {'n/a':>7}"
            print(f"{size:>9,} {name:<18} {ingest_cells} {p50:>13.1f} {p95:>7.1f} {index_cells} {e50:>12.1f} {e95:>7.1f}")
        if old is not None:
            different = sum(not same_hits(a, b) for a, b in zip(hits[names[0]], hits[names[1]], strict=True))  # type: ignore[arg-type]
            print(f"{size:>9,} queries whose hits differ between the two searches: {different} of {len(queries)}")
    for size, name, p95 in results:
        if size >= 100_000:
            print(f"p95 at {size:,} passages ({name}): {p95:.1f} ms; goal < {GOAL_MS:.0f} ms: {'met' if p95 < GOAL_MS else 'NOT met'}")
    print("load average (1, 5, 15 min): start {:.2f} {:.2f} {:.2f}; end {:.2f} {:.2f} {:.2f}".format(*load_start, *os.getloadavg()))


if __name__ == "__main__":
    main()
