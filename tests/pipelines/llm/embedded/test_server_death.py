"""A server that dies is replaced by the next start, and the dead one is collected (no zombie for the life of the app)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil

from pipelines.llm.embedded import server
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


def test_the_app_sends_a_server_no_more_calls_at_once_than_its_slots(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pipelines.config import AppSettings
    from pipelines.llm.embedded import BACKEND

    settings = AppSettings(model_cache=tmp_path)
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="native", slots=1))
    recorded, other = SimpleNamespace(openai_api_base="http://127.0.0.1:40001/v1"), SimpleNamespace(openai_api_base="http://x/v1")
    assert BACKEND.parallel_calls(recorded, settings, 4) == 1  # type: ignore[arg-type]
    assert BACKEND.parallel_calls(other, settings, 4) == 4, "a server it does not know: the role's setting"  # type: ignore[arg-type]
    server.write_state(tmp_path, server.ServerState(pid=1, port=40001, model="m.gguf", n_ctx=8192, kind="native", slots=6))
    assert BACKEND.parallel_calls(recorded, settings, 4) == 4, "the role's setting when it is lower"  # type: ignore[arg-type]
