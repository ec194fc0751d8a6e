"""A run's events kept on local disk while the run store is away, and stored in it again when it is back.

When the database stops answering for longer than the writer waits (or its disk is full, or
its folder read-only), the event writer puts what it could not store, and everything after,
in a spill file: JSON lines in ``<data folder>/spill/``, or in the system's temporary folder
when the data folder cannot be written either. ``replay_spills`` stores those lines, in their
order, into the store they were meant for, the next time something opens it (the app's start,
a resume, a CLI command); a line is stored once (a side file counts the lines done, so a
replay cut short goes on where it stopped), and the spill file is removed when all are in.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from pipelines.events import Event, dump_event, parse_event
from pipelines.record.outage import is_store_fault, store_key
from pipelines.record.store import RunStatus, RunStore

log = logging.getLogger(__name__)

TEMP_SPILL = Path(tempfile.gettempdir()) / "debatedesk-spill"


def spill_dirs(data_dir: Path | None) -> list[Path]:
    """Where spill files go, first choice first: the data folder's, then the temporary folder's."""
    return [data_dir / "spill", TEMP_SPILL] if data_dir is not None else [TEMP_SPILL]


class Spill:
    """One run's spill file, open for appending and locked (a replay leaves it alone until it is closed)."""

    def __init__(self, path: Path, handle: IO[str]) -> None:
        self.path = path
        self._handle = handle
        self.lines = 0

    @classmethod
    def open(cls, dirs: Sequence[Path], store: RunStore, run_id: str, owner: str) -> Spill:
        """The first folder that takes a new file; raises OSError naming every folder tried when none does."""
        tried: list[str] = []
        for folder in dirs:
            path = folder / f"{run_id}-{uuid.uuid4().hex[:8]}.jsonl"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                handle = path.open("x", encoding="utf-8")
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                spill = cls(path, handle)
                spill._put({"spill": 1, "run_id": run_id, "owner": owner, "store": store_key(store.url)})
                return spill
            except OSError as exc:
                tried.append(f"{folder} ({exc.strerror or exc})")
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)
        raise OSError(f"no folder could take the run's events: {'; '.join(tried)}")

    def events(self, events: Sequence[Event]) -> None:
        for evt in events:
            self._put({"event": dump_event(evt)})

    def journal(self, run_id: str, kind: str, key: str, payload: str) -> None:
        self._put({"journal": {"run_id": run_id, "kind": kind, "key": key, "payload": payload}})

    def finish(self, status: str) -> None:
        self._put({"finish": status})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._handle.close()

    def _put(self, line: dict[str, Any]) -> None:
        self._handle.write(json.dumps(line) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())  # a spill is what survives the process: on disk before the writer goes on
        self.lines += 1


def replay_spills(store: RunStore, dirs: Iterable[Path]) -> list[str]:
    """Store every spill file meant for ``store`` (in order, each line once); returns the run ids replayed.

    A file another process still writes (or replays) is locked and left for later; a store
    that fails again stops the replay where it is, to go on next time.
    """
    key = store_key(store.url)
    replayed: list[str] = []
    for folder in dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.jsonl")):
            try:
                run_id = _replay_one(store, key, path)
            except Exception as exc:  # the store away again: the rest waits for the next time
                if not is_store_fault(exc):
                    raise
                log.warning("spilled events in %s not stored yet: %s", path, exc)
                return replayed
            if run_id:
                replayed.append(run_id)
    return replayed


def _replay_one(store: RunStore, key: str, path: Path) -> str | None:
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # its writer is still at it, or another process replays it
        lines = [json.loads(line) for line in handle if line.strip()]
        if not lines or lines[0].get("store") != key:
            return None
        head = lines[0]
        run_id, owner = str(head["run_id"]), str(head["owner"])
        done_path = path.with_suffix(".done")
        done = int(done_path.read_text() or 1) if done_path.is_file() else 1
        i = done
        while i < len(lines):
            j = i
            if "event" in lines[i]:  # consecutive events go in one transaction, as the writer stores them
                while j < len(lines) and "event" in lines[j]:
                    j += 1
                store.append_many(run_id, [parse_event(line["event"]) for line in lines[i:j]])
            else:
                j = i + 1
                line = lines[i]
                if "journal" in line:
                    entry = line["journal"]
                    store.journal_put(entry["run_id"], entry["kind"], entry["key"], entry["payload"])
                elif "finish" in line:
                    status: RunStatus = line["finish"]
                    store.finish(run_id, status, owner=owner)  # only if nobody took the run over since
            _write_atomic(done_path, str(j))
            i = j
        log.info("stored %d spilled lines of run %s from %s", len(lines) - done, run_id, path)
        path.unlink()
        done_path.unlink(missing_ok=True)
        return run_id


def _write_atomic(path: Path, text: str) -> None:
    temp = path.with_suffix(".tmp")
    temp.write_text(text)
    os.replace(temp, path)
