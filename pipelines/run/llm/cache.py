"""A response cache for model calls on disk, keyed by (model, prompt, parameters).

Repeating an evaluation, re-running a claim or replaying a demo then costs nothing: the
answer comes back from disk and the call is recorded as ``ModelCallCompleted(cached=True)``.
It is on by default for the ``fake`` and ``embedded`` backends (free, local, and the
same prompt at temperature 0 gives the same answer) and opt-in for paid APIs
(``ModelSpec.cache``: ``auto``, ``on`` or ``off``). diskcache keeps it in SQLite, safe
to share between threads and processes.

A cache is only ever a saving: a damaged one (a file the disk or a killed process left malformed) is moved aside as
``responses.damaged-<time>`` and a fresh one opened, and a read or write that fails mid-run is a miss, logged, never a
failed claim.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

import diskcache

from pipelines.core.config import ModelSpec
from pipelines.run.llm.registry import get_backend

DEFAULT_SIZE_LIMIT = 2**30  # 1 GiB; least recently stored answers go first

log = logging.getLogger(__name__)


def _open(path: Path, size_limit: int) -> diskcache.Cache:
    """The cache in ``path``; a damaged one is moved aside (kept for a look, never read again) and a fresh one opened."""

    def opened() -> diskcache.Cache:
        return diskcache.Cache(str(path), size_limit=size_limit, eviction_policy="least-recently-stored")

    try:
        return opened()
    except sqlite3.DatabaseError as exc:
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{time.monotonic_ns() % 10**6}")
        path.rename(aside)
        path.mkdir()
        log.warning("the response cache in %s was damaged (%s): moved to %s, a new empty one opened", path, exc, aside.name)
        return opened()


class DiskResponseCache:
    """Model answers in a folder (the ResponseCache hook of ``pipelines.run.llm.client``)."""

    def __init__(self, path: Path, size_limit: int = DEFAULT_SIZE_LIMIT) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._cache = _open(path, size_limit)
        self.hits = 0
        self.misses = 0
        self.failures = 0  # reads and writes the cache's database refused (each a miss, or an answer not kept)

    def get(self, key: str) -> str | None:
        try:
            value = self._cache.get(key)
        except sqlite3.DatabaseError as exc:
            self._failed("read", exc)
            value = None
        if isinstance(value, str):
            self.hits += 1
            return value
        self.misses += 1
        return None

    def put(self, key: str, text: str) -> None:
        try:
            self._cache.set(key, text)
        except sqlite3.DatabaseError as exc:
            self._failed("write", exc)

    def _failed(self, what: str, exc: sqlite3.DatabaseError) -> None:
        self.failures += 1
        if self.failures == 1 or self.failures % 100 == 0:  # said once, then now and then: not a line per call
            log.warning("the response cache in %s refused a %s (%s); the call is made (or its answer not kept)", self.path, what, exc)

    def delete(self, key: str) -> None:
        self._cache.delete(key)

    def clear(self) -> int:
        """Forget every answer; returns how many there were."""
        return int(self._cache.clear())

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._cache.close()


def caches(spec: ModelSpec) -> bool:
    """Whether calls for this role go through the response cache (``auto`` asks the backend)."""
    if spec.cache == "on":
        return True
    if spec.cache == "off":
        return False
    return get_backend(spec.backend).cache_by_default
