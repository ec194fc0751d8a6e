"""A short embedding call runs torch on one thread; big batches keep every thread, and the setting is restored."""

from typing import Any

import pytest
import torch

from pipelines.tools import embeddings
from pipelines.tools.embeddings import MiniLMEmbedder


def threads_seen(embedder: MiniLMEmbedder, texts: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    seen: list[int] = []
    encode = embedder._model.encode

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(torch.get_num_threads())
        return encode(*args, **kwargs)

    monkeypatch.setattr(embedder._model, "encode", spy)
    embedder.embed(texts)
    monkeypatch.undo()
    return seen[0]


def test_a_query_runs_on_one_thread_and_a_batch_on_all(embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert threads_seen(embedder, ["masks reduce transmission"], monkeypatch) == 1
        assert torch.get_num_threads() == 2  # restored for whoever uses torch next
        many = [f"sentence {i}" for i in range(embeddings.SINGLE_THREAD_UP_TO + 1)]
        assert threads_seen(embedder, many, monkeypatch) == 2
    finally:
        torch.set_num_threads(before)


def test_one_thread_gives_the_same_vectors(embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    text = ["Vaccines train the immune system."]
    one = embedder.embed(text)
    monkeypatch.setattr(embeddings, "SINGLE_THREAD_UP_TO", 0)
    assert one == pytest.approx(embedder.embed(text), abs=1e-5)
