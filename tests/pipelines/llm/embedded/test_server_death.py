"""A server that dies is replaced by the next start, and the dead one is collected (no zombie for the life of the app);
a server that hangs is told from a busy one by its health check, and killed."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from pipelines.run.llm.embedded import server
from tests.pipelines.llm.embedded.test_server_key import fake_binary  # noqa: F401  (the fixture)


def test_a_killed_server_is_started_again_and_the_dead_one_leaves_no_zombie(tmp_path: Path, fake_binary: Path) -> None:  # noqa: F811
    model = tmp_path / "m.gguf"
    model.write_bytes(b"")
    cache = tmp_path / "cache"
    try:
        first = server.ensure_server(model, cache, n_threads=1, binary=str(fake_binary))
        dead = server.read_state(cache)
        assert dead is not None
        os.kill(dead.pid, signal.SIGKILL)
        deadline = time.time() + 10
        while psutil.Process(dead.pid).status() != psutil.STATUS_ZOMBIE and time.time() < deadline:
            time.sleep(0.05)
        assert not server.is_live(dead)

        second = server.ensure_server(model, cache, n_threads=1, binary=str(fake_binary))
        state = server.read_state(cache)
        assert second != first and state is not None and state.pid != dead.pid, "a new server, recorded"
        assert psutil.Process(state.pid).status() != psutil.STATUS_ZOMBIE
        try:
            zombie = psutil.Process(dead.pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            zombie = False
        assert not zombie, "the dead server's exit was collected"
    finally:
        server._stop_owned_servers()


def test_a_hung_server_is_told_by_its_health_check_and_killed_and_a_live_one_is_left(tmp_path: Path, fake_binary: Path) -> None:  # noqa: F811
    model = tmp_path / "m.gguf"
    model.write_bytes(b"")
    cache = tmp_path / "cache"
    try:
        server.ensure_server(model, cache, n_threads=1, binary=str(fake_binary))
        state = server.read_state(cache)
        assert state is not None and server.responds(state)
        assert not server.stop_unresponsive(cache, state, timeout_s=2), "it answers: left running"
        assert server.is_live(state) and server.read_state(cache) == state

        os.kill(state.pid, signal.SIGSTOP)  # hung: it runs and its port takes connections, but nothing answers
        assert server.is_live(state), "alive by every other sign"
        assert not server.responds(state, timeout_s=1)
        assert server.stop_unresponsive(cache, state, timeout_s=1)
        assert not psutil.pid_exists(state.pid) or psutil.Process(state.pid).status() == psutil.STATUS_ZOMBIE
        assert server.read_state(cache) is None, "its record went with it"
        assert not server.stop_unresponsive(cache, state, timeout_s=1), "once"

        server.ensure_server(model, cache, n_threads=1, binary=str(fake_binary))
        again = server.read_state(cache)
        assert again is not None and again.pid != state.pid and server.responds(again)
    finally:
        server._stop_owned_servers()


def test_only_the_recorded_native_server_is_asked_whether_it_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from pipelines.core.config import AppSettings
    from pipelines.run.llm.embedded import BACKEND

    asked: list[int] = []
    monkeypatch.setattr(server, "stop_unresponsive", lambda cache, state, timeout_s=0: asked.append(state.port) or True)
    settings = AppSettings(model_cache=tmp_path)
    recorded, other = SimpleNamespace(openai_api_base="http://127.0.0.1:40001/v1"), SimpleNamespace(openai_api_base="http://x/v1")
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="python"))
    assert BACKEND.stopped_unresponsive(recorded, settings) is None, "the Python server answers nothing while it generates"  # type: ignore[arg-type]
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="native"))
    assert BACKEND.stopped_unresponsive(other, settings) is None  # type: ignore[arg-type]
    assert asked == []
    why = BACKEND.stopped_unresponsive(recorded, settings)  # type: ignore[arg-type]
    assert asked == [40001] and why is not None and why.startswith("hung: no answer to its health check")


def test_the_app_sends_a_server_no_more_calls_at_once_than_its_slots(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pipelines.core.config import AppSettings
    from pipelines.run.llm.embedded import BACKEND

    settings = AppSettings(model_cache=tmp_path)
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="native", slots=1))
    recorded, other = SimpleNamespace(openai_api_base="http://127.0.0.1:40001/v1"), SimpleNamespace(openai_api_base="http://x/v1")
    assert BACKEND.parallel_calls(recorded, settings, 4) == 1  # type: ignore[arg-type]
    assert BACKEND.parallel_calls(other, settings, 4) == 4, "a server it does not know: the role's setting"  # type: ignore[arg-type]
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="native", slots=6))
    assert BACKEND.parallel_calls(recorded, settings, 4) == 4, "the role's setting when it is lower"  # type: ignore[arg-type]
