"""The run store goes away mid-run (database down, disk full, folder read-only): nothing stored is lost, the person is told plainly.

Outages are made by ``StoreOutage``, which makes the store's engine raise the OperationalError
the real fault raises; on PostgreSQL (when DEBATEDESK_TEST_POSTGRES_URL names a server) the
same runs go against a real server too.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.core.errors import StoreUnavailableError
from pipelines.core.events import Event, RunInterrupted, RunResumed, RunStarted, VerdictReached
from pipelines.record import event_writer
from pipelines.record.digest import digest
from pipelines.record.journal import fingerprint
from pipelines.record.store import RunStore
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import resume_run, start_run, stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.disks import fill
from tests.fakes import fake_config, make_services
from tests.faults import StoreOutage
from tests.stores import POSTGRES_DIR_ENV, POSTGRES_ENV, pg_ctl, store_url  # noqa: F401  (the fixture)

CLAIM = "Masks reduce transmission of respiratory viruses"
LIFECYCLE = (RunStarted, RunResumed, RunInterrupted)


@pytest.fixture
def fresh(store_url: str, demo_data_dir: Path, embedder: Embedder, tmp_path: Path) -> Iterator[Services]:  # noqa: F811
    """Services over the indexed demo corpus, an empty store of their own and a data folder of their own (for spills)."""
    services = make_services(demo_data_dir, embedder)
    services.settings = services.settings.model_copy(update={"data_dir": tmp_path / "data"})
    services.store = RunStore(store_url)
    yield services
    services.store.engine.dispose()


def comparable(events: list[Event]) -> list[str]:
    return [fingerprint(e) for e in events if not isinstance(e, LIFECYCLE)]


def run_with_outage(
    services: Services, seconds: float, *, kind: str = "down", at_event: int = 8, latency_s: float = 0.2
) -> tuple[str, list[Event]]:
    """Run the claim on a slow fake model; the store fails for ``seconds`` from the ``at_event``-th event on."""
    assert services.store is not None
    outage = StoreOutage(services.store.engine)
    services.chat_override = FakeChatModel(latency_s=latency_s)
    try:
        handle = start_run(CLAIM, fake_config(protocol="single"), services)
        deadline = time.monotonic() + 60
        started = False
        while not handle.done:  # not handle.stream(): a run that never ends must fail the test, not hang it
            assert time.monotonic() < deadline, "the run did not end within 60 s: it hangs"
            handle.wait(len(handle.events), timeout=0.01)
            if not started and len(handle.events) >= at_event:
                outage.start(seconds, kind=kind)
                started = True
        seen = list(handle.stream())
    finally:
        outage.stop()
        outage.remove()
    return seen[0].run_id, seen  # type: ignore[attr-defined]


def test_a_two_second_outage_mid_run_loses_nothing_and_the_run_completes(fresh: Services) -> None:
    assert fresh.store is not None
    fresh.chat_override = FakeChatModel(latency_s=0.05)
    reference = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    run_id, seen = run_with_outage(fresh, 2.0)
    stored = fresh.store.events(run_id)
    assert isinstance(seen[-1], VerdictReached)
    assert len(stored) == len(reference) == len(seen)
    assert comparable(stored) == comparable(reference)
    run = fresh.store.get_run(run_id)
    assert run is not None and run.status == "completed" and run.event_count == len(reference)


@pytest.mark.parametrize(
    ("kind", "said"),
    [("down", "is unreachable"), ("full", "is full"), ("readonly", "cannot be written")],
)
def test_a_long_outage_pauses_the_run_keeps_its_events_and_resumes_to_the_same_verdict(
    fresh: Services, monkeypatch: pytest.MonkeyPatch, kind: str, said: str
) -> None:
    assert fresh.store is not None
    monkeypatch.setattr(event_writer, "STORE_PATIENCE_S", 0.2)
    fresh.chat_override = FakeChatModel(latency_s=0.05)
    reference = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))

    run_id, seen = run_with_outage(fresh, 3600, kind=kind, at_event=1, latency_s=0.6)  # "for ever": the run must not wait

    stopped = seen[-1]
    assert not any(isinstance(e, VerdictReached) for e in seen)  # stopped between two steps, not left to run to its end
    assert isinstance(stopped, RunInterrupted)
    assert said in stopped.reason and "the run is paused and will resume" in stopped.reason
    assert "Traceback" not in stopped.reason and "SELECT" not in stopped.reason and "INSERT" not in stopped.reason
    spills = list((fresh.settings.data_dir / "spill").glob("*.jsonl"))
    assert len(spills) == 1 and str(spills[0]) in stopped.reason
    assert len(fresh.store.events(run_id)) < len(seen)  # the rest waits on disk

    fresh.chat_override = FakeChatModel()
    resumed = list(resume_run(run_id, fresh).stream())
    record = fresh.store.events(run_id)
    assert not list((fresh.settings.data_dir / "spill").glob("*.jsonl"))  # stored, then removed
    assert record[: len(seen)] == seen  # every event the first attempt made, once, in order, before the resume's
    assert comparable(record) == comparable(reference)
    assert isinstance(resumed[-1], VerdictReached | RunResumed)  # a run paused after its verdict has nothing left to do
    assert digest(record).verdict == digest(reference).verdict
    assert fresh.store.get_run(run_id).status == "completed"  # type: ignore[union-attr]


def test_a_long_outage_with_no_spill_folder_of_the_desks_own_pauses_the_run_with_no_shared_fallback(
    fresh: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 46: the spill used to fall back to a shared folder in the system's temporary folder; now the run pauses and says why."""
    assert fresh.store is not None
    monkeypatch.setattr(event_writer, "STORE_PATIENCE_S", 0.2)
    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)
    fresh.settings.data_dir.mkdir(parents=True, exist_ok=True)
    (fresh.settings.data_dir / "spill").symlink_to(shared)  # not a folder of the desk's own: never written
    run_id, seen = run_with_outage(fresh, 3600, at_event=1, latency_s=0.6)
    stopped = seen[-1]
    assert isinstance(stopped, RunInterrupted)
    assert "cannot be kept on disk" in stopped.reason and "symbolic link" in stopped.reason and "The run is paused" in stopped.reason
    assert not list(shared.rglob("*.jsonl"))
    assert fresh.store.get_run(run_id) is not None


def test_a_store_away_when_a_run_starts_gets_a_plain_message(fresh: Services) -> None:
    assert fresh.store is not None
    outage = StoreOutage(fresh.store.engine)
    outage.start()
    try:
        with pytest.raises(StoreUnavailableError, match="is unreachable; nothing was changed") as caught:
            start_run(CLAIM, fake_config(protocol="single"), fresh)
    finally:
        outage.remove()
    assert "INSERT" not in str(caught.value)


# --- the real thing: a small file system that fills up, or turns read-only (needs root to mount; skipped otherwise) ---


def test_a_really_full_disk_pauses_the_run_and_it_resumes_once_there_is_space(
    small_disk: Path, demo_data_dir: Path, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (A read-only remount is refused while the store has its file open: that fault is the injected kind above, and at start below.)
    monkeypatch.setattr(event_writer, "STORE_PATIENCE_S", 0.2)
    services = make_services(demo_data_dir, embedder)
    services.settings = services.settings.model_copy(update={"data_dir": small_disk})
    services.store = RunStore(f"sqlite:///{small_disk / 'runs.sqlite'}")
    services.chat_override = FakeChatModel(latency_s=0.6)
    handle = start_run(CLAIM, fake_config(protocol="single"), services)
    handle.wait(0, timeout=5)
    filler = fill(small_disk)
    deadline = time.monotonic() + 60
    while not handle.done:
        assert time.monotonic() < deadline, "the run did not end within 60 s: it hangs"
        handle.wait(len(handle.events), timeout=0.1)
    seen = list(handle.stream())
    stopped = seen[-1]
    assert isinstance(stopped, RunInterrupted) and "The run is paused" in stopped.reason
    assert "is full" in stopped.reason
    assert "cannot be kept on disk" in stopped.reason  # no shared fallback: the data folder's disk is full, the run pauses
    assert not list(Path(tempfile.gettempdir()).glob("debatedesk-spill/*.jsonl"))

    filler.unlink()
    services.store.engine.dispose()
    services.store = RunStore(services.store.url)  # the next start
    services.chat_override = FakeChatModel()
    list(resume_run(handle.run_id, services).stream())
    record = services.store.events(handle.run_id)
    stored_before = [e for e in seen if e in record]
    assert record[: len(stored_before)] == stored_before  # what was stored stays; the run went on from it
    assert services.store.get_run(handle.run_id).status == "completed"  # type: ignore[union-attr]
    services.store.engine.dispose()


def test_a_read_only_data_folder_at_start_gets_a_plain_message(small_disk: Path) -> None:
    RunStore(f"sqlite:///{small_disk / 'runs.sqlite'}").engine.dispose()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(StoreUnavailableError, match="cannot be written"):
        RunStore(f"sqlite:///{small_disk / 'runs.sqlite'}")


# --- PostgreSQL stopped and started for real (the throwaway server of `.ci/postgres start DIR`, named by its DIR) ---


@pytest.mark.skipif(
    not (os.environ.get(POSTGRES_ENV) and os.environ.get(POSTGRES_DIR_ENV)),
    reason=f"needs {POSTGRES_ENV} and {POSTGRES_DIR_ENV} (the DIR given to `.ci/postgres start DIR`)",
)
def test_postgresql_stopped_for_three_seconds_mid_run_loses_nothing(fresh: Services, store_url: str) -> None:  # noqa: F811
    if not store_url.startswith("postgresql"):
        pytest.skip("this one stops the PostgreSQL server")
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.skip("it would stop the server under the other workers' tests: run it alone, with -n 0")
    assert fresh.store is not None
    folder = Path(os.environ[POSTGRES_DIR_ENV])
    fresh.chat_override = FakeChatModel(latency_s=0.2)
    reference = list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    fresh.chat_override = FakeChatModel(latency_s=0.2)
    handle = start_run(CLAIM, fake_config(protocol="single"), fresh)
    handle.wait(7, timeout=10)
    pg_ctl(folder, "-m", "immediate", "stop")  # connections cut, as when the server crashes
    try:
        time.sleep(3)
    finally:
        pg_ctl(folder, "start")
    deadline = time.monotonic() + 60
    while not handle.done:
        assert time.monotonic() < deadline, "the run did not end within 60 s: it hangs"
        handle.wait(len(handle.events), timeout=0.1)
    seen = list(handle.stream())
    assert isinstance(seen[-1], VerdictReached)
    assert comparable(fresh.store.events(handle.run_id)) == comparable(reference)
    assert fresh.store.get_run(handle.run_id).status == "completed"  # type: ignore[union-attr]


def test_a_spill_replay_cut_short_goes_on_where_it_stopped_and_stores_each_line_once(
    store_url: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sqlalchemy.exc import OperationalError

    from pipelines.core.events import StageCompleted, StageStarted
    from pipelines.record.spill import Spill, replay_spills

    store = RunStore(store_url)
    store.create_run("r1", CLAIM, "single", {})
    spilled = Spill.open(tmp_path, store, "r1", "elsewhere:1:dead")
    first, second, third = StageStarted(stage="a"), StageCompleted(stage="a"), StageStarted(stage="b")
    spilled.events([first, second])
    spilled.journal("r1", "llm", "k", "answer")
    spilled.events([third])
    spilled.close()
    real_put = store.journal_put

    def refused(*args: object) -> None:
        raise OperationalError("INSERT", None, Exception("connection refused"))

    monkeypatch.setattr(store, "journal_put", refused)
    assert replay_spills(store, tmp_path).replayed == []  # the store went away again after the first two events
    assert [type(e).__name__ for e in store.events("r1")] == ["StageStarted", "StageCompleted"]
    monkeypatch.setattr(store, "journal_put", real_put)
    assert replay_spills(store, tmp_path).replayed == ["r1"]
    assert store.events("r1") == [first, second, third]  # each once, in order
    assert store.journal("r1") == {("llm", "k"): ["answer"]}
    assert not list((tmp_path / "spill").iterdir())
    store.engine.dispose()
