"""MiniLM's two runtimes: torch runs a short call on one thread (big batches keep every thread, and the setting is
restored); ONNX Runtime, the default, gives the same vectors."""

import threading
from typing import Any

import numpy as np
import pytest
import torch

from pipelines.core.config import AppSettings
from pipelines.run.tools import embeddings
from pipelines.run.tools.embeddings import MiniLMEmbedder, OnnxMiniLMEmbedder, onnx_model


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(onnx_model(AppSettings().model_cache))


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


TEXTS = [
    "Masks reduce transmission of respiratory viruses.",
    "x",
    "A much longer passage about how vaccines are tested in randomized trials before approval. " * 30,  # past 256 tokens: cut
    "Vitamin D and COVID-19.",
    "",
]


def test_onnx_runtime_gives_torch_s_vectors_in_the_callers_order(embedder: MiniLMEmbedder, onnx: OnnxMiniLMEmbedder) -> None:
    many = TEXTS * 3  # past SINGLE_THREAD_UP_TO: the batch session, several lengths sorted and put back

    torch_vectors, onnx_vectors = embedder.embed(many), onnx.embed(many)

    assert onnx_vectors.shape == (len(many), 384) and onnx_vectors.dtype == np.float32
    assert np.abs(onnx_vectors - torch_vectors).max() < 1e-4
    assert np.linalg.norm(onnx_vectors, axis=1) == pytest.approx(1, abs=1e-5)
    assert onnx.embed(TEXTS[:1]) == pytest.approx(torch_vectors[:1], abs=1e-4)  # a query: the one-thread session
    assert onnx.embed([]).shape == (0, 384)


def test_the_export_is_made_once_and_reused(onnx: OnnxMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    path = onnx_model(AppSettings().model_cache)
    monkeypatch.setattr(embeddings, "_export_onnx", lambda target: pytest.fail("exported again"))

    assert onnx_model(AppSettings().model_cache) == path and path.stat().st_size > 80_000_000


def test_without_the_export_the_app_embeds_on_torch(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    def broken(target: Any) -> None:
        raise ModuleNotFoundError("No module named 'onnx'")

    monkeypatch.setenv("DEBATEDESK_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(embeddings, "_export_onnx", broken)
    embeddings.default_embedder.cache_clear()
    try:
        assert isinstance(embeddings.default_embedder(), MiniLMEmbedder)
        monkeypatch.setenv("DEBATEDESK_EMBEDDINGS", "torch")
        embeddings.default_embedder.cache_clear()
        assert isinstance(embeddings.default_embedder(), MiniLMEmbedder)
    finally:
        embeddings.default_embedder.cache_clear()


def test_a_batch_is_shared_out_to_one_worker_per_core_and_each_text_keeps_its_own_vector(
    onnx: OnnxMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    session = onnx._session

    class Spy:
        def run(self, *args: Any) -> Any:
            seen.append(threading.current_thread().name)
            return session.run(*args)

    monkeypatch.setattr(onnx, "_session", Spy())
    monkeypatch.setattr(onnx, "_threads", 2)
    many = TEXTS * 3

    together = onnx.embed(many)
    assert len(seen) == len(many) and len({name for name in seen if name.startswith("minilm")}) == 2
    seen.clear()
    alone = np.stack([onnx.embed([text])[0] for text in many])
    assert set(seen) == {threading.current_thread().name}  # a query runs on the caller's thread
    assert np.array_equal(together, alone)  # bit for bit: no padding, no neighbours
