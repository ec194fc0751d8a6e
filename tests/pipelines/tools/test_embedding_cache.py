import threading
import time
from pathlib import Path

import numpy as np

from pipelines.run.tools.embedding_cache import CachedEmbedder
from pipelines.run.tools.embeddings import MiniLMEmbedder


class SlowEmbedder:
    """A stand-in that takes 50 ms per batch and counts its batches and texts."""

    name = "slow"
    dimension = 4

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        time.sleep(0.05)
        return np.array([[len(t), t.count("a"), 1.0, 0.0] for t in texts], dtype=np.float32)


def test_same_vectors_as_the_model_it_wraps(embedder: MiniLMEmbedder) -> None:
    cached = CachedEmbedder(embedder)
    texts = ["Masks reduce transmission.", "The Moon landings were real.", "Masks reduce transmission."]
    np.testing.assert_allclose(cached.embed(texts), embedder.embed(texts), atol=1e-6)
    assert cached.misses == 2 and cached.hits == 1  # the repeat inside one call is embedded once
    np.testing.assert_allclose(cached.embed(texts[:1]), embedder.embed(texts[:1]), atol=1e-6)
    assert cached.hits == 2


def test_vectors_persist_on_disk(tmp_path: Path) -> None:
    inner = SlowEmbedder()
    CachedEmbedder(inner, tmp_path).embed(["alpha", "beta"])
    again = CachedEmbedder(inner, tmp_path)
    vectors = again.embed(["beta", "alpha", "gamma"])
    assert inner.batches == [["alpha", "beta"], ["gamma"]]
    assert vectors[1].tolist() == [5.0, 2.0, 1.0, 0.0]


def test_calls_from_many_threads_are_merged_into_few_batches() -> None:
    inner = SlowEmbedder()
    cached = CachedEmbedder(inner)
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = cached.embed([f"text number {i}", "shared text"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and all(r.shape == (2, 4) for r in results.values())
    assert results[7][0].tolist() == [13.0, 0.0, 1.0, 0.0]
    assert len(inner.batches) < 12 and cached.batches == len(inner.batches)
    embedded = [t for b in inner.batches for t in b]
    assert sorted(t for t in embedded if t != "shared text") == sorted(f"text number {i}" for i in range(12))  # each once
    assert 1 <= embedded.count("shared text") <= len(inner.batches)  # at most once per batch


def test_an_error_reaches_every_caller_of_the_failed_batch() -> None:
    class Broken(SlowEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            time.sleep(0.05)
            raise RuntimeError("model crashed")

    cached = CachedEmbedder(Broken())
    errors: list[str] = []

    def work(i: int) -> None:
        try:
            cached.embed([f"t{i}"])
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["model crashed"] * 4


def test_a_repeated_search_query_is_embedded_once_and_passages_stay_out_of_the_cache(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    from corpora.base import Document
    from corpora.chunking import chunk_documents
    from pipelines.core.config import AppSettings
    from pipelines.run.services import Services

    services = Services.create(AppSettings(data_dir=tmp_path), embedder=embedder, with_store=False)
    docs = [Document(id="masks", title="Masks", sentences=("Masks reduce the spread of respiratory droplets.", "Cloth masks filter less."))]
    services.index.ingest("notes", chunk_documents(docs))
    cache = services.embedder
    assert isinstance(cache, CachedEmbedder) and cache.misses == 0  # ingestion embeds passages outside the cache

    first = services.index.search("notes", "do masks reduce spread", 1)
    again = services.index.search("notes", "do masks reduce spread", 1)
    assert (cache.misses, cache.hits) == (1, 1)  # a repeated query (a repeated evaluation) costs no model pass
    assert [h.passage.id for h in again] == [h.passage.id for h in first] and again[0].score == first[0].score


def test_a_damaged_cache_file_is_read_past_not_a_failure(tmp_path: Path) -> None:
    inner = SlowEmbedder()
    CachedEmbedder(inner, tmp_path).embed(["alpha"])
    (tmp_path / "cache.db").write_bytes(b"not a database at all" * 100)  # damaged on disk (a crash, a full disk, a bad copy)
    again = CachedEmbedder(inner, tmp_path)
    assert again.embed(["alpha", "beta"])[0].tolist() == [5.0, 2.0, 1.0, 0.0], "computed again, in memory"
    assert again.embed(["beta"])[0].tolist() == [4.0, 1.0, 1.0, 0.0] and inner.batches[-1] == ["alpha", "beta"]
