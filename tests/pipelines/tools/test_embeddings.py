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


def test_passages_are_embedded_with_int8_weights_close_to_the_float_ones_each_on_its_own(onnx: OnnxMiniLMEmbedder) -> None:
    passages = onnx.for_passages()
    assert passages is onnx.for_passages() and passages.for_passages() is passages  # made once, loaded once
    assert (
        passages._path.name == "model.int8.onnx" and passages._path.stat().st_size < 0.7 * onnx._path.stat().st_size
    )  # the word table stays float
    many = TEXTS[:4] * 3

    float_vectors, int8_vectors = onnx.embed(many), passages.embed(many)

    assert not np.array_equal(int8_vectors, float_vectors), "another model: the int8 weights"
    cosine = (float_vectors * int8_vectors).sum(axis=1)
    assert cosine.min() > 0.97 and cosine.mean() > 0.985  # per output channel: 0.995 on Check-COVID's passages
    assert np.linalg.norm(int8_vectors, axis=1) == pytest.approx(1, abs=1e-5)
    alone = np.stack([passages.embed([text])[0] for text in many])
    assert np.array_equal(int8_vectors, alone), "a passage's vector depends on that passage alone"


def test_the_int8_model_is_made_once_and_a_failure_leaves_passages_on_the_float_weights(
    onnx: OnnxMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    made = embeddings.int8_model(onnx._path)
    import onnxruntime.quantization

    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic", lambda *a, **k: pytest.fail("quantized again"))
    assert embeddings.int8_model(onnx._path) == made

    def broken(*args: Any, **kwargs: Any) -> None:
        raise PermissionError("read-only model cache")

    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic", broken)
    (tmp_path / "model.onnx").symlink_to(onnx._path)
    elsewhere = OnnxMiniLMEmbedder(tmp_path / "model.onnx")  # a cache without the int8 file, where it cannot be written
    assert embeddings.passage_embedder(elsewhere, "int8") is elsewhere
    assert "passages are embedded with the float weights" in caplog.text
    assert not (tmp_path / "model.int8.onnx").exists() and not (tmp_path / "model.int8.onnx.tmp").exists()
    assert embeddings.passage_embedder(onnx, "float32") is onnx


def test_an_ingestion_embeds_passages_with_int8_weights_and_searches_with_the_float_ones(onnx: OnnxMiniLMEmbedder, tmp_path: Any) -> None:
    from corpora.base import Passage
    from pipelines.run.tools.corpus_index import CorpusIndex

    passages = [
        Passage(id=f"p{i}", doc_id=f"d{i}", title="", text=text, index=0, sentence_indices=(0,)) for i, text in enumerate(TEXTS[:4] * 3)
    ]
    seen: dict[str, int] = {"float": 0, "int8": 0}
    for which, embedder in (("float", onnx), ("int8", onnx.for_passages())):
        original = embedder.embed

        def counted(texts: list[str], which: str = which, original: Any = original) -> Any:
            seen[which] += len(texts)
            return original(texts)

        embedder.embed = counted  # type: ignore[method-assign]
    try:
        index = CorpusIndex(AppSettings(data_dir=tmp_path / "int8"), onnx)
        index.ingest("notes", passages)
        assert seen == {"float": 0, "int8": len(passages)}
        index.search("notes", "masks and viruses", 3, mode="dense")
        assert seen == {"float": 1, "int8": len(passages)}, "queries stay on the float weights"
        CorpusIndex(AppSettings(data_dir=tmp_path / "float", passage_precision="float32"), onnx).ingest("notes", passages)
        assert seen == {"float": 1 + len(passages), "int8": len(passages)}
    finally:
        del onnx.embed, onnx.for_passages().embed
