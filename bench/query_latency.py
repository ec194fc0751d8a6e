"""Corpus query latency on Check-COVID: this tree's search beside the search at a git commit, claim by claim, same results.

    .venv/bin/python bench/query_latency.py [--baseline main] [--split dev] [--limit N] [--mode hybrid] [--data-dir DIR]

Searches the check-covid corpus (built in ``--data-dir`` on first use, then reused) once per
Check-COVID claim in each condition, the conditions' order rotating claim by claim so each
sees the same load, and prints p50 and p95 per condition:

- ``before``/``after``: one search (k=3) by ``CorpusIndex`` at ``--baseline`` and in this tree,
  the claim embedded by MiniLM inside the search as for a first-seen query (no embedding
  cache: a repeated query costs no embedding in the app);
- ``before, index side``/``after, index side``: the same searches given the claim's vector
  computed beforehand: the index alone (Chroma, BM25, fusion, reading the hits);
- ``MiniLM query embedding``: the claim embedded alone (one thread, as in a search), and
  ``..., torch's default threads``: the same with ``SINGLE_THREAD_UP_TO`` off, to check that
  choice (an earlier version of this benchmark timed it with the second condition's query
  vector already in the embedding cache, so its figures did not show it).

Both searches must return the same hits (passages, order and scores): every claim is
compared in the timed mode, and also in every mode at k=3 and k=10; the count that differ
is printed (0 expected). Load averages at the start and end are printed with the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.baseline import baseline_module, same_hits
from bench.retrieval_quality import load_claims, percentile
from pipelines.core.config import AppSettings
from pipelines.run.services import Services
from pipelines.run.tools import embeddings
from pipelines.run.tools.corpus_index import SEARCH_MODES, CorpusIndex, SearchMode
from pipelines.run.tools.embeddings import Embedder

CORPUS = "check-covid"


class PrecomputedEmbedder:
    """Query vectors computed beforehand, so a search times the index alone."""

    def __init__(self, inner: Embedder, texts: list[str]) -> None:
        self.name, self.dimension = inner.name, inner.dimension
        self._vectors = dict(zip(texts, inner.embed(texts), strict=True))

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vectors[t] for t in texts])


def count_different(before: object, after: CorpusIndex, claims: list[str]) -> tuple[int, int]:
    """(searches compared, searches whose hits differ) over every mode at k=3 and k=10, and the claims in pairs."""
    compared = different = 0
    for mode in SEARCH_MODES:
        for k in (3, 10):
            for text in claims:
                compared += 1
                different += not same_hits(before.search(CORPUS, text, k, mode=mode), after.search(CORPUS, text, k, mode=mode))  # type: ignore[attr-defined]
    for pair in zip(claims[::2], claims[1::2], strict=False):  # several queries searched together
        compared += 1
        different += not same_hits(before.search(CORPUS, list(pair), 5), after.search(CORPUS, list(pair), 5))  # type: ignore[attr-defined]
    return compared, different


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--baseline", default="main", help="git commit or branch whose search is timed beside this tree's")
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--mode", default="hybrid", choices=SEARCH_MODES)
    parser.add_argument("--checkcovid-dir", type=Path, default=AppSettings().checkcovid_dir)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/debatedesk-bench"))
    args = parser.parse_args(argv)
    mode: SearchMode = args.mode

    claims = [c.text for c in load_claims(args.checkcovid_dir, args.split, args.limit)]
    settings = AppSettings(data_dir=args.data_dir, checkcovid_dir=args.checkcovid_dir)
    services = Services.create(settings, with_store=False)
    services.ensure_corpus(CORPUS)
    minilm = services.index.embedder  # the model itself: the Services' query embedder would cache repeats
    precomputed = PrecomputedEmbedder(minilm, [*claims, "warm-up query"])
    old = baseline_module(args.baseline).CorpusIndex
    searches = {
        f"before ({args.baseline})": old(settings, minilm),
        "after (this tree)": CorpusIndex(settings, minilm),
        f"before ({args.baseline}), index side": old(settings, minilm, query_embedder=precomputed),
        "after (this tree), index side": CorpusIndex(settings, minilm, query_embedder=precomputed),
    }
    for index in searches.values():
        index.search(CORPUS, "warm-up query", 3, mode=mode)
    one_thread, default_threads = "MiniLM query embedding", "MiniLM query embedding, torch's default threads"
    conditions = [*searches, one_thread, default_threads]
    ms: dict[str, list[float]] = {name: [] for name in conditions}
    hits: dict[str, list[object]] = {name: [] for name in searches}
    load_start = os.getloadavg()
    for number, claim in enumerate(claims):
        for name in conditions[number % len(conditions) :] + conditions[: number % len(conditions)]:
            started = time.perf_counter()
            if name in searches:
                hits[name].append(searches[name].search(CORPUS, claim, 3, mode=mode))
            elif name == one_thread:
                minilm.embed([claim])
            else:
                single, embeddings.SINGLE_THREAD_UP_TO = embeddings.SINGLE_THREAD_UP_TO, 0
                started = time.perf_counter()
                try:
                    minilm.embed([claim])
                finally:
                    embeddings.SINGLE_THREAD_UP_TO = single
            ms[name].append((time.perf_counter() - started) * 1000)
    load_end = os.getloadavg()
    names = list(searches)
    timed_different = sum(
        not same_hits(a, b) for pair in ((0, 1), (2, 3)) for a, b in zip(hits[names[pair[0]]], hits[names[pair[1]]], strict=True)
    )
    compared, different = count_different(searches[names[2]], searches[names[3]], claims)

    print(
        f"| {mode} search, k=3, {len(claims)} {args.split} claims, {CORPUS} ({services.index.count(CORPUS):,} passages) | p50 ms | p95 ms |"
    )
    print("|---|---|---|")
    for name in conditions:
        values = sorted(ms[name])
        print(f"| {name} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    for a, b in ((names[0], names[1]), (names[2], names[3])):
        before, after = sorted(ms[a]), sorted(ms[b])
        print(
            f"{a} / {b}: p50 {percentile(before, 50) / percentile(after, 50):.2f}x, p95 {percentile(before, 95) / percentile(after, 95):.2f}x"
        )
    print(f"timed searches with different hits: {timed_different} of {2 * len(claims)}")
    print(f"searches with different hits (every mode, k=3 and 10, pairs of claims): {different} of {compared}")
    print("load average (1, 5, 15 min): start {:.2f} {:.2f} {:.2f}; end {:.2f} {:.2f} {:.2f}".format(*load_start, *load_end))


if __name__ == "__main__":
    main()
