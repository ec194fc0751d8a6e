"""A run's events kept on local disk while the run store is away, and stored in it again when it is back.

When the database stops answering for longer than the writer waits (or its disk is full, or
its folder read-only), the event writer puts what it could not store, and everything after,
in a spill file: JSON lines in ``<data folder>/spill/``, and nowhere else. There is no
fallback to a shared temporary folder: a file any local account can create is a file any
local account can write into the signed record. When the data folder cannot take the spill
either, the run stops cleanly and says so (what was stored before stays).

The spill has one writer, the desk's own account, and ``replay_spills`` trusts nothing else:

- the folder is made 0700 and must be a real folder (not a symlink) owned by the desk's
  account; a file in it must be a regular file of that account, not writable by others,
  made 0600 by the writer;
- each line carries a MAC: HMAC-SHA256, keyed by a secret derived from the desk's signing key
  (``signing.py``, 0600 in the data folder), over the MAC of the line before and the line's
  own canonical JSON. The first line names the run, the process that wrote it, the store and
  the run's chain head when the spill began; each event line carries the event's link in the
  run's hash chain (``chain.py``), continuing from that head. A line added, altered, swapped
  or taken from another spill does not verify, and is refused;
- a file is replayed only into the run it names, and only where that run's stored chain
  stands at the spill's head (or at one of its lines, when a replay was cut short): a spill
  never continues a record that moved on without it.

A file that cannot be trusted (another account's, loose rights) or that is damaged (a cut
last line, an unparsable event, a MAC that does not hold) is set aside: renamed to
``<name>.set-aside`` beside it, with a message naming it, after every good line before the
damage is stored. Replaying never raises for a bad file: the app, ``runs`` and ``verify``
go on. A line is stored once (a side file counts the lines done, so a replay cut short goes
on where it stopped), and the spill file is removed when all are in.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import stat
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cryptography.hazmat.primitives import serialization

from pipelines.core.database.faults import is_store_fault
from pipelines.core.events import Event, dump_event, parse_event
from pipelines.record import chain
from pipelines.record.outage import store_key
from pipelines.record.signing import desk_key
from pipelines.record.store import RunStatus, RunStore

log = logging.getLogger(__name__)

FOLDER = "spill"
VERSION = 2
SET_ASIDE = ".set-aside"
_MAC_CONTEXT = b"debatedesk.spill/mac/v1\n"


class SpillRefusedError(OSError):
    """The spill folder or a spill file is not the desk's own (a symlink, another account's, open to others)."""


def spill_dir(data_dir: Path) -> Path:
    """The one folder spill files go in: the desk's data folder's ``spill``."""
    return Path(data_dir) / FOLDER


def private_folder(folder: Path, *, create: bool) -> Path:
    """``folder`` as a real folder of this account that nobody else can write (made 0700 when ``create``); raises SpillRefusedError."""
    if create:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise SpillRefusedError(f"the spill folder {folder} is a symbolic link; spills go only in a real folder of the desk's own")
    if not stat.S_ISDIR(info.st_mode):
        raise SpillRefusedError(f"{folder} is not a folder")
    if info.st_uid != os.geteuid():
        raise SpillRefusedError(
            f"the spill folder {folder} belongs to another account (uid {info.st_uid}, the desk runs as {os.geteuid()}); "
            "nothing in it is stored. Move it away"
        )
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)  # ours, made looser by hand or a restore: private again before anything is read from it
    return folder


def _mac_key(data_dir: Path) -> bytes:
    """The spill's MAC key: derived from the desk's private signing key, which only the desk's account reads."""
    private = desk_key(data_dir).private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return hashlib.sha256(_MAC_CONTEXT + private).digest()


def _mac(key: bytes, previous: str, line: dict[str, Any]) -> str:
    return hmac.new(key, bytes.fromhex(previous) + chain.canonical(line), hashlib.sha256).hexdigest()


class Spill:
    """One run's spill file, open for appending and locked (a replay leaves it alone until it is closed)."""

    def __init__(self, path: Path, handle: IO[str], key: bytes, head: str) -> None:
        self.path = path
        self._handle = handle
        self._key = key
        self._mac = "00" * 32
        self._head = head  # the run's chain link before the next event
        self.lines = 0

    @classmethod
    def open(cls, data_dir: Path | None, store: RunStore, run_id: str, owner: str, head: str = chain.GENESIS) -> Spill:
        """A new spill file in the data folder's private spill folder; raises OSError saying why when it cannot be made.

        ``head`` is the run's chain link as stored last (its events spilled continue from it).
        """
        if data_dir is None:
            raise OSError("there is no data folder to keep them in")
        folder = spill_dir(data_dir)
        path = folder / f"{run_id}-{uuid.uuid4().hex[:8]}.jsonl"
        try:
            private_folder(folder, create=True)
            key = _mac_key(data_dir)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND, 0o600)
            handle = os.fdopen(fd, "w", encoding="utf-8")
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            spill = cls(path, handle, key, head)
            spill._put(
                {"spill": VERSION, "run_id": run_id, "owner": owner, "store": store_key(store.url), "uid": os.geteuid(), "head": head}
            )
            return spill
        except Exception as exc:  # a full disk, a read-only folder, a folder not ours, a signing key that cannot be made
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise OSError(f"the data folder's spill folder {folder} could not take the run's events ({reason})") from exc

    def events(self, events: Sequence[Event]) -> None:
        for evt in events:
            payload = dump_event(evt)
            self._head = chain.link(self._head, chain.event_digest(payload))
            self._put({"event": payload, "link": self._head})

    def journal(self, run_id: str, kind: str, key: str, payload: str) -> None:
        self._put({"journal": {"run_id": run_id, "kind": kind, "key": key, "payload": payload}})

    def finish(self, status: str) -> None:
        self._put({"finish": status})

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._handle.close()

    def _put(self, line: dict[str, Any]) -> None:
        self._mac = _mac(self._key, self._mac, line)
        self._handle.write(json.dumps({**line, "mac": self._mac}) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())  # a spill is what survives the process: on disk before the writer goes on
        self.lines += 1


@dataclass
class SpillReport:
    """What a replay did: the runs it stored spilled lines of, and every file it refused or set aside (in words, naming it)."""

    replayed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def replay_spills(store: RunStore, data_dir: Path | None) -> SpillReport:
    """Store every spill file of the desk's spill folder meant for ``store`` (in order, each line once).

    A file another process still writes (or replays) is locked and left for later; a store
    that fails again stops the replay where it is, to go on next time. Nothing here raises
    for a bad file or folder: it is set aside (or left) and said in ``problems``.
    """
    report = SpillReport()
    if data_dir is None:
        return report
    folder = spill_dir(data_dir)
    if not os.path.lexists(folder):
        return report
    try:
        private_folder(folder, create=False)
        key = _mac_key(data_dir)
    except Exception as exc:
        _problem(report, f"spilled events in {folder} were not read: {exc}")
        return report
    where = store_key(store.url)
    for path in sorted(folder.glob("*.jsonl")):
        try:
            run_id = _replay_one(store, where, key, path, report)
        except Exception as exc:  # the store away again: the rest waits for the next time
            if not is_store_fault(exc):
                _set_aside(path, f"it could not be stored ({type(exc).__name__}: {exc})", report)
                continue
            log.warning("spilled events in %s not stored yet: %s", path, exc)
            return report
        if run_id:
            report.replayed.append(run_id)
    return report


def _replay_one(store: RunStore, where: str, key: bytes, path: Path, report: SpillReport) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None  # another replayer (a thread or process of this desk) stored it and removed it meanwhile
    except OSError as exc:
        _set_aside(path, f"it cannot be opened as a file of the desk's own ({exc.strerror or exc})", report)
        return None
    # The lock is held until the file is stored and removed: two replayers at once (two resumed runs of one worker, the app
    # and a worker on one data folder) store each line once, and the second finds the file gone.
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            _set_aside(
                path,
                f"it is not the desk's own (owner uid {info.st_uid}, mode {stat.filemode(info.st_mode)}; the desk runs as "
                f"uid {os.geteuid()} and writes its spills 0600): none of it was stored",
                report,
            )
            return None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # its writer is still at it, or another process replays it
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            return None  # stored and removed by the replayer that held the lock before
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            return None  # the name is another file's now: left for the next replay
        return _store_lines(store, where, handle.read(), key, path, report)


def _store_lines(store: RunStore, where: str, data: bytes, key: bytes, path: Path, report: SpillReport) -> str | None:
    """Store the verified lines of the spill at ``path`` (its lock held by the caller); the run's id, or None when none went in."""
    lines, damage = _verified_lines(data, key)
    if not lines:
        _set_aside(path, f"its first line {damage or 'is missing'}: none of it was stored", report)
        return None
    head = lines[0]
    if head.get("store") != where:
        if damage is None:
            return None  # meant for another of the desk's stores: left for it
        _set_aside(path, f"it is damaged ({damage}) and meant for another store ({head.get('store')})", report)
        return None
    run_id, owner = str(head["run_id"]), str(head["owner"])
    summary = store.get_run(run_id)
    if summary is None or summary.origin != "run":
        _set_aside(path, f"it names run {run_id}, which is not a run of this store: none of it was stored", report)
        return None
    done_path = path.with_name(path.name + ".done")
    done = _read_done(done_path)
    i = done
    previous = _link_before(lines, done)
    while i < len(lines):
        j = i + 1
        if "event" in lines[i]:  # consecutive events go in one transaction, as the writer stores them
            while j < len(lines) and "event" in lines[j]:
                j += 1
            stored_at = store.head(run_id, fresh=True)
            batch = lines[i:j]
            links = [str(line["link"]) for line in batch]
            if stored_at in links:  # a replay cut between storing these and counting them: the stored ones are not stored again
                batch = batch[links.index(stored_at) + 1 :]
            elif stored_at != previous:
                _write_done(done_path, i)
                _set_aside(
                    path,
                    f"run {run_id}'s record moved on without it (its stored chain does not end where line {i + 1} follows on): "
                    f"{i - 1} line(s) were stored before that, the rest were not",
                    report,
                )
                return run_id if i > 1 else None
            if batch:
                store.append_many(run_id, [parse_event(line["event"]) for line in batch])
            previous = links[-1]
        else:
            line = lines[i]
            if "journal" in line:
                entry = line["journal"]
                store.journal_put(run_id, str(entry["kind"]), str(entry["key"]), str(entry["payload"]))
            elif "finish" in line:
                status: RunStatus = line["finish"]
                store.finish(run_id, status, owner=owner)  # only if nobody took the run over since
        _write_done(done_path, j)
        i = j
    log.info("stored %d spilled lines of run %s from %s", len(lines) - done, run_id, path)
    done_path.unlink(missing_ok=True)
    if damage is not None:
        _set_aside(path, f"it is damaged after line {len(lines)} ({damage}); the {len(lines) - 1} good line(s) before were stored", report)
    else:
        path.unlink()
    return run_id


def _verified_lines(data: bytes, key: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """The spill's lines up to the first that does not hold (unparsable, cut, MAC wrong, event unreadable), and what is wrong there."""
    good: list[dict[str, Any]] = []
    mac = "00" * 32
    run_id = None
    raw_lines = data.split(b"\n")
    for n, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        if n == len(raw_lines):  # the file does not end with a newline: its writer was cut off mid-line
            return good, f"line {n} was cut off"
        try:
            line = json.loads(raw)
            if not isinstance(line, dict):
                raise ValueError("not an object")
            given = str(line.pop("mac", ""))
            if not hmac.compare_digest(given, _mac(key, mac, line)):
                return good, f"line {n} was not written by this desk (its MAC does not hold: planted or altered)"
            if not good:
                if line.get("spill") != VERSION or not line.get("run_id") or not isinstance(line.get("head"), str):
                    raise ValueError("not a spill header")
                run_id = line["run_id"]
            elif "event" in line:
                parse_event(line["event"])
                if not isinstance(line.get("link"), str):
                    raise ValueError("an event without its chain link")
                expected = chain.link(_link_before(good, len(good)), chain.event_digest(line["event"]))
                if line["link"] != expected:
                    raise ValueError("its chain link does not follow")
            elif "journal" in line:
                if not isinstance(line["journal"], dict) or line["journal"].get("run_id") != run_id:
                    raise ValueError("a journal entry of another run")
            elif line.get("finish") not in ("completed", "failed", "interrupted"):
                raise ValueError("an unknown line")
        except Exception as exc:
            return good, f"line {n} cannot be read ({type(exc).__name__}: {str(exc)[:200]})"
        mac = given
        good.append(line)
    return good, None


def _link_before(lines: Sequence[dict[str, Any]], index: int) -> str:
    """The run's chain link just before line ``index``: the last event line's before it, else the header's head."""
    for line in reversed(lines[1:index]):
        if "event" in line:
            return str(line["link"])
    return str(lines[0]["head"]) if lines else chain.GENESIS


def _read_done(path: Path) -> int:
    try:
        return max(1, int(path.read_text().strip() or 1))
    except (OSError, ValueError):
        return 1


def _write_done(path: Path, done: int) -> None:
    temp = path.with_name(path.name + ".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(str(done))
    os.replace(temp, path)


def _set_aside(path: Path, why: str, report: SpillReport) -> None:
    aside = path.with_name(path.name + SET_ASIDE)
    try:
        os.replace(path, aside)
        path.with_name(path.name + ".done").unlink(missing_ok=True)
        _problem(report, f"the spill file {path} was set aside as {aside.name}: {why}")
    except OSError as exc:
        _problem(report, f"the spill file {path} is not stored ({why}), and could not be set aside: {exc.strerror or exc}")


def _problem(report: SpillReport, message: str) -> None:
    log.error("%s", message)
    report.problems.append(message)
