"""The real thing: llama.cpp's server on SmolLM2-135M killed (SIGKILL) or hung (SIGSTOP) mid-run; the run starts it again and completes.

Skipped where `make model` built no llama-server. The fast tests (test_server_restart.py) do the
same on a fake local server; this one keeps the real client's errors honest (langchain-openai
raises its own subclass of openai's connection error, which the fake tests had missed).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from pipelines.config import ROLES, AppSettings, RunConfig
from pipelines.events import ModelCallCompleted, ModelServerRestarted, VerdictReached
from pipelines.llm.embedded import server
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.tools.embeddings import Embedder
from tests.conftest import smollm2_gguf
from tests.fakes import DeadWeb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(server.native_server_binary() is None, reason="llama-server is not built (make model)"),
]


def test_a_run_whose_server_is_killed_starts_it_again_and_completes(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> None:
    settings = AppSettings(data_dir=demo_data_dir, model_cache=tmp_path / "model-cache", llama_threads=1)
    services = Services.create(settings, embedder=embedder)
    services.web = DeadWeb()  # type: ignore[assignment]
    services.response_cache = None  # every call goes to the server
    config = RunConfig().with_backend("embedded")
    roles = {role: config.role(role).model_copy(update={"model": str(smollm2_gguf()), "max_tokens": 48}) for role in ROLES}
    config = config.model_copy(update={"protocol": "single", "corpus": "demo", **roles})
    killed: list[int] = []
    events = []
    try:
        for evt in stream_run("Antibiotics cure viral infections such as the flu", config, services):
            events.append(evt)
            if isinstance(evt, ModelCallCompleted) and not killed:
                state = server.read_state(settings.model_cache)
                assert state is not None
                os.kill(state.pid, signal.SIGKILL)
                killed.append(state.pid)
    finally:
        server.stop_server(settings.model_cache)
    assert killed, "the server was killed after its first answer"
    assert isinstance(events[-1], VerdictReached), events[-1]
    restarted = [e for e in events if isinstance(e, ModelServerRestarted)]
    assert len(restarted) == 1 and "Connection" in restarted[0].reason


def test_a_run_whose_server_hangs_stops_it_starts_another_and_completes(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> None:
    """SIGSTOP: the server runs and its port takes connections, but answers nothing; the call times out (here in 15 s)."""
    settings = AppSettings(data_dir=demo_data_dir, model_cache=tmp_path / "model-cache", llama_threads=1)
    services = Services.create(settings, embedder=embedder)
    services.web = DeadWeb()  # type: ignore[assignment]
    services.response_cache = None
    config = RunConfig().with_backend("embedded")
    roles = {
        role: config.role(role).model_copy(update={"model": str(smollm2_gguf()), "max_tokens": 48, "timeout_s": 15.0}) for role in ROLES
    }
    config = config.model_copy(update={"protocol": "single", "corpus": "demo", **roles})
    hung: list[int] = []
    events = []
    started = time.perf_counter()
    try:
        for evt in stream_run("Antibiotics cure viral infections such as the flu", config, services):
            events.append(evt)
            if isinstance(evt, ModelCallCompleted) and not hung:
                state = server.read_state(settings.model_cache)
                assert state is not None
                os.kill(state.pid, signal.SIGSTOP)
                hung.append(state.pid)
    finally:
        for pid in hung:  # if the run failed to stop it, it must not stay stopped forever
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server.stop_server(settings.model_cache)
    assert hung, "the server hung after its first answer"
    assert isinstance(events[-1], VerdictReached), events[-1]
    restarted = [e for e in events if isinstance(e, ModelServerRestarted)]
    assert len(restarted) == 1 and restarted[0].reason.startswith("hung: "), restarted
    assert time.perf_counter() - started < 240, "one timeout, one health check, one start: not a run's worth of timeouts"
