"""The signed record has one writer: spill files live only in the desk's private data folder, carry the run's chain and a MAC,
and a planted, altered, foreign or damaged one is never stored (issue 46, Must deliver 2).

These are probes as another local account would make them: files of another uid (``os.chown``; the tests run as root, and
are skipped where they cannot chown), in the old shared temporary folder, in the desk's own folder, or a line added by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.core.events import StageCompleted, StageStarted, VerdictOverridden
from pipelines.record import chain
from pipelines.record.spill import SET_ASIDE, Spill, SpillRefusedError, replay_spills, spill_dir
from pipelines.record.store import RunStore
from tests.stores import store_url  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[3]
CLAIM = "Masks reduce transmission of respiratory viruses"
OTHER_UID = 54321
FORGED = VerdictOverridden(label="REFUTED", note="planted", by="Ed Editor")


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file of another account needs root (os.chown)")


@pytest.fixture
def store(store_url: str) -> Iterator[RunStore]:  # noqa: F811
    store = RunStore(store_url)
    store.create_run("r1", CLAIM, "single", {})
    store.append_many("r1", [StageStarted(stage="a")])
    yield store
    store.engine.dispose()


def old_style_line(run_id: str, store: RunStore) -> str:
    """What a spill file said before this change: a header and an event, no MAC, no chain link (anyone can write it)."""
    from pipelines.core.events import dump_event
    from pipelines.record.outage import store_key

    head = {"spill": 1, "run_id": run_id, "owner": "elsewhere:1:dead", "store": store_key(store.url)}
    return json.dumps(head) + "\n" + json.dumps({"event": dump_event(FORGED)}) + "\n"


def overrides(store: RunStore) -> list[str]:
    return [e.by for e in store.events("r1") if isinstance(e, VerdictOverridden)]


def test_a_spill_is_private_to_the_desk_and_each_line_carries_the_chain_and_a_mac(store: RunStore, tmp_path: Path) -> None:
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([StageCompleted(stage="a")])
    spilled.close()
    folder = spill_dir(tmp_path)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert spilled.path.parent == folder and spilled.path.stat().st_mode & 0o777 == 0o600
    head, line = (json.loads(x) for x in spilled.path.read_text().splitlines())
    assert head["head"] == store.head("r1") and head["mac"] and line["mac"]
    assert line["link"] == chain.link(head["head"], chain.event_digest(line["event"]))
    assert replay_spills(store, tmp_path).replayed == ["r1"]
    assert store.stored_chain("r1").intact and [type(e).__name__ for e in store.events("r1")] == ["StageStarted", "StageCompleted"]


def test_a_line_planted_in_the_desks_own_spill_is_refused_and_said(store: RunStore, tmp_path: Path) -> None:
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([StageCompleted(stage="a")])
    spilled.close()
    lines = spilled.path.read_text().splitlines()
    from pipelines.core.events import dump_event

    payload = dump_event(FORGED)
    previous = json.loads(lines[-1])["link"]
    # The forger knows the chain (it is public) but not the desk's key: a link that follows, a MAC made up.
    planted = {"event": payload, "link": chain.link(previous, chain.event_digest(payload)), "mac": "ab" * 32}
    with spilled.path.open("a") as out:
        out.write(json.dumps(planted) + "\n")
    report = replay_spills(store, tmp_path)
    assert overrides(store) == []  # the planted verdict is not in the record
    assert [type(e).__name__ for e in store.events("r1")] == ["StageStarted", "StageCompleted"]  # the good line before it is
    assert store.stored_chain("r1").intact
    assert len(report.problems) == 1 and spilled.path.name in report.problems[0] and "planted or altered" in report.problems[0]
    assert (spilled.path.parent / (spilled.path.name + SET_ASIDE)).is_file() and not spilled.path.exists()


def test_an_altered_line_is_refused_from_where_it_was_altered(store: RunStore, tmp_path: Path) -> None:
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([StageCompleted(stage="a"), StageStarted(stage="b")])
    spilled.close()
    lines = spilled.path.read_text().splitlines()
    lines[2] = lines[2].replace('"b"', '"B"')
    spilled.path.write_text("\n".join(lines) + "\n")
    report = replay_spills(store, tmp_path)
    assert [getattr(e, "stage", None) for e in store.events("r1")] == ["a", "a"]
    assert "line 3" in report.problems[0]


def test_a_file_of_another_account_in_the_desks_folder_is_never_stored(store: RunStore, tmp_path: Path) -> None:
    needs_root()
    # Even a file whose every line verifies (the other account copied one of the desk's spills): its owner is not the desk.
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([FORGED])
    spilled.close()
    os.chown(spilled.path, OTHER_UID, OTHER_UID)
    report = replay_spills(store, tmp_path)
    assert overrides(store) == []
    assert "not the desk's own" in report.problems[0] and str(spilled.path) in report.problems[0]


def test_a_spill_folder_of_another_account_or_a_symlink_is_never_read_nor_written(store: RunStore, tmp_path: Path) -> None:
    needs_root()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o777)
    (elsewhere / "r1-planted.jsonl").write_text(old_style_line("r1", store))
    data = tmp_path / "data"
    data.mkdir()
    spill_dir(data).symlink_to(elsewhere)
    report = replay_spills(store, data)
    assert overrides(store) == [] and "symbolic link" in report.problems[0]
    with pytest.raises(OSError, match="symbolic link"):
        Spill.open(data, store, "r1", "here:1:x")

    spill_dir(data).unlink()
    spill_dir(data).mkdir(mode=0o700)
    os.chown(spill_dir(data), OTHER_UID, OTHER_UID)
    (spill_dir(data) / "r1-planted.jsonl").write_text(old_style_line("r1", store))
    report = replay_spills(store, data)
    assert overrides(store) == [] and "belongs to another account" in report.problems[0]
    with pytest.raises(SpillRefusedError):
        from pipelines.record.spill import private_folder

        private_folder(spill_dir(data), create=True)


def test_the_shared_temporary_folder_is_never_read_by_the_desk(store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hole of issue 46: a local account creates ``debatedesk-spill`` in the temporary folder first and plants a verdict."""
    shared = tmp_path / "tmp"
    (shared / "debatedesk-spill").mkdir(parents=True)
    planted = shared / "debatedesk-spill" / "r1-planted.jsonl"
    planted.write_text(old_style_line("r1", store))
    if os.geteuid() == 0:
        os.chown(planted, OTHER_UID, OTHER_UID)
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "DEBATEDESK_DATA_DIR": str(data), "DEBATEDESK_DATABASE_URL": store.url, "TMPDIR": str(shared)}
    done = subprocess.run([sys.executable, "-m", "pipelines", "runs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert overrides(store) == [] and planted.exists()


def test_a_cut_or_unparsable_spill_is_set_aside_its_good_lines_stored_and_the_desk_goes_on(store: RunStore, tmp_path: Path) -> None:
    data = tmp_path / "data"
    spilled = Spill.open(data, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([StageCompleted(stage="a"), StageStarted(stage="b")])
    spilled.close()
    text = spilled.path.read_text()
    spilled.path.write_text(text[: len(text) - 25])  # what a killed writer or a full disk leaves: the last line cut
    env = {**os.environ, "DEBATEDESK_DATA_DIR": str(data), "DEBATEDESK_DATABASE_URL": store.url}
    done = subprocess.run([sys.executable, "-m", "pipelines", "runs"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "r1" in done.stdout and "Traceback" not in done.stderr
    assert spilled.path.name in done.stderr and "set aside" in done.stderr and "cut off" in done.stderr
    assert [getattr(e, "stage", None) for e in store.events("r1")] == ["a", "a"]  # the good line before the cut is stored
    assert (spilled.path.parent / (spilled.path.name + SET_ASIDE)).is_file()

    second = Spill.open(data, store, "r1", "here:1:x", store.head("r1", fresh=True))
    second.events([StageStarted(stage="c")])
    second.close()
    with second.path.open("a") as out:
        out.write('{"event": {"type": "NoSuchEvent"}, "mac": "00"}\n')
    report = replay_spills(store, data)
    assert [getattr(e, "stage", None) for e in store.events("r1")] == ["a", "a", "c"]
    assert len(report.problems) == 1 and second.path.name in report.problems[0]
    assert store.stored_chain("r1").intact


def test_a_spill_never_continues_a_record_that_moved_on_without_it(store: RunStore, tmp_path: Path) -> None:
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([FORGED])
    spilled.close()
    store.append_many("r1", [StageCompleted(stage="a")])  # the run went on (resumed elsewhere) after the spill was written
    report = replay_spills(store, tmp_path)
    assert overrides(store) == [] and "moved on without it" in report.problems[0]


def test_a_spill_of_one_run_goes_only_into_that_run(store: RunStore, tmp_path: Path) -> None:
    store.create_run("r2", CLAIM, "single", {})
    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.journal("r2", "llm", "k", "an answer for another run")
    spilled.close()
    report = replay_spills(store, tmp_path)
    assert store.journal("r2") == {} and store.journal("r1") == {}
    assert "another run" in report.problems[0]


def test_two_replays_at_once_store_each_line_once_and_neither_sets_the_file_aside(
    store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two resumed runs of one worker (or the app and a worker on one data folder) replay the spill folder at the same time."""
    import threading
    import time

    spilled = Spill.open(tmp_path, store, "r1", "here:1:x", store.head("r1", fresh=True))
    spilled.events([StageCompleted(stage="a"), StageStarted(stage="b")])
    spilled.journal("r1", "llm", "k", "an answer")
    spilled.close()
    append = store.append_many

    def slow_append(run_id, events):  # type: ignore[no-untyped-def]
        time.sleep(0.5)  # a store that takes its time: the other replayer comes in meanwhile
        return append(run_id, events)

    monkeypatch.setattr(store, "append_many", slow_append)
    reports = []
    threads = [threading.Thread(target=lambda: reports.append(replay_spills(store, tmp_path))) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.1)
    for t in threads:
        t.join(timeout=30)
    assert [r.problems for r in reports] == [[], []], "neither replayer met a problem"
    assert [getattr(e, "stage", None) for e in store.events("r1")] == ["a", "a", "b"], "each line stored once"
    assert not list(spill_dir(tmp_path).iterdir()), "the spill stored and removed, nothing set aside"
