"""A response cache for model calls on disk, keyed by (model, prompt, parameters).

Repeating an evaluation, re-running a claim or replaying a demo then costs nothing: the
answer comes back from disk and the call is recorded as ``ModelCallCompleted(cached=True)``.
It is on by default for the ``fake`` and ``embedded`` backends (free, local, and the
same prompt at temperature 0 gives the same answer) and opt-in for paid APIs
(``ModelSpec.cache``: ``auto``, ``on`` or ``off``). diskcache keeps it in SQLite, safe
to share between threads and processes.
"""

from __future__ import annotations

from pathlib import Path

import diskcache

from pipelines.core.config import ModelSpec
from pipelines.run.llm.registry import get_backend

DEFAULT_SIZE_LIMIT = 2**30  # 1 GiB; least recently stored answers go first


class DiskResponseCache:
    """Model answers in a folder (the ResponseCache hook of ``pipelines.run.llm.client``)."""

    def __init__(self, path: Path, size_limit: int = DEFAULT_SIZE_LIMIT) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._cache = diskcache.Cache(str(path), size_limit=size_limit, eviction_policy="least-recently-stored")
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        value = self._cache.get(key)
        if isinstance(value, str):
            self.hits += 1
            return value
        self.misses += 1
        return None

    def put(self, key: str, text: str) -> None:
        self._cache.set(key, text)

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
