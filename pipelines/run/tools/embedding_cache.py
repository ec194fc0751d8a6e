"""Embeddings of evidence text computed once: a cache (memory, and disk when given a folder) and batching.

Scorers embed the same evidence again and again (novelty against the pool every round, the
same passages in every run of a repeated evaluation). ``CachedEmbedder`` wraps any Embedder:
vectors it has seen come from memory or disk; the rest are embedded in one batch, and calls
that arrive from several threads while the model is busy are merged into the next batch
(on 2 cores one batch of 16 texts costs little more than one text).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

import diskcache
import numpy as np

from pipelines.run.tools.embeddings import Embedder


class CachedEmbedder:
    """An Embedder with a vector cache and cross-thread batching; same vectors as the one it wraps."""

    def __init__(self, inner: Embedder, path: Path | None = None, memory_items: int = 20_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_items = memory_items
        self._memory_lock = threading.Lock()
        self._disk = _open_disk(path) if path is not None else None
        self._batcher = _Batcher(inner)
        self.hits = 0
        self.misses = 0

    @property
    def batches(self) -> int:
        """How many times the wrapped model ran (fewer than the calls it served, when batching helped)."""
        return self._batcher.batches

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        for key in dict.fromkeys(keys):
            vector = self._lookup(key)
            if vector is not None:
                found[key] = vector
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        self.hits += len(texts) - len(missing)  # a text repeated within one call is embedded once
        self.misses += len(missing)
        if missing:
            vectors = self._batcher.embed(list(missing.values()))
            for key, vector in zip(missing, vectors, strict=True):
                found[key] = vector
                self._remember(key, vector)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _key(self, text: str) -> str:
        return hashlib.sha1(f"{self.name}\0{text}".encode()).hexdigest()

    def _lookup(self, key: str) -> np.ndarray | None:
        with self._memory_lock:
            vector = self._memory.get(key)
            if vector is not None:
                self._memory.move_to_end(key)
                return vector
        if self._disk is not None:
            try:
                raw = self._disk.get(key)
            except DISK_TROUBLE as exc:  # a cache, never the record: read past it
                _forget_disk(self, exc)
                raw = None
            if isinstance(raw, bytes) and len(raw) == self.dimension * 4:
                vector = np.frombuffer(raw, dtype=np.float32)
                self._remember(key, vector, to_disk=False)
                return vector
        return None

    def _remember(self, key: str, vector: np.ndarray, to_disk: bool = True) -> None:
        with self._memory_lock:
            self._memory[key] = vector
            self._memory.move_to_end(key)
            while len(self._memory) > self._memory_items:
                self._memory.popitem(last=False)
        if to_disk and self._disk is not None:
            try:
                self._disk.set(key, np.asarray(vector, dtype=np.float32).tobytes())
            except DISK_TROUBLE as exc:
                _forget_disk(self, exc)


class _Request:
    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None
        self.done = False


class _Batcher:
    """Group commit: whoever finds the model idle embeds every request waiting, in one batch."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._pending: list[_Request] = []
        self._busy = False
        self._cond = threading.Condition()
        self.batches = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        request = _Request(texts)
        with self._cond:
            self._pending.append(request)
            while not request.done and self._busy:
                self._cond.wait()
            if request.done:
                return self._result(request)
            self._busy = True
            batch, self._pending = self._pending, []
        try:
            self._run(batch)
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        return self._result(request)

    def _run(self, batch: list[_Request]) -> None:
        unique = list(dict.fromkeys(t for r in batch for t in r.texts))
        try:
            vectors = self._inner.embed(unique)
            self.batches += 1
            row = {text: i for i, text in enumerate(unique)}
            for r in batch:
                r.vectors = vectors[[row[t] for t in r.texts]]
        except BaseException as exc:  # every waiter gets the error, not only the thread that ran the batch
            for r in batch:
                r.error = exc
            raise
        finally:
            for r in batch:
                r.done = True

    @staticmethod
    def _result(request: _Request) -> np.ndarray:
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors


DISK_TROUBLE = (sqlite3.Error, OSError)  # a damaged, locked, full or vanished cache file
log = logging.getLogger("debatedesk.embeddings")


def _open_disk(path: Path) -> diskcache.Cache | None:
    """The vector cache on disk, or None when its file cannot be opened (the vectors are then computed and kept in memory)."""
    try:
        return diskcache.Cache(str(path))
    except DISK_TROUBLE as exc:
        log.warning("the embedding cache at %s cannot be opened (%s): vectors are kept in memory only", path, exc)
        return None


def _forget_disk(cache: CachedEmbedder, exc: BaseException) -> None:
    log.warning("the embedding cache on disk failed (%s): vectors are kept in memory only from now on", exc)
    cache._disk = None
