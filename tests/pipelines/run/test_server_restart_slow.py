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

from pipelines.core.config import ROLES, AppSettings, RunConfig
from pipelines.core.events import Event, ModelCallCompleted, ModelServerRestarted, VerdictReached
from pipelines.run.llm.embedded import server
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.conftest import smollm2_gguf
from tests.fakes import DeadWeb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(server.native_server_binary() is None, reason="llama-server is not built (make model)"),
]


def run_and_signal_the_server(
    sig: signal.Signals, tmp_path: Path, demo_data_dir: Path, embedder: Embedder, timeout_s: float
) -> list[Event]:
    """A run of ``single`` on SmolLM2 whose server gets ``sig`` after the run's first answer; its events."""
    settings = AppSettings(data_dir=demo_data_dir, model_cache=tmp_path / "model-cache", llama_threads=1)
    services = Services.create(settings, embedder=embedder)
    services.web = DeadWeb()  # type: ignore[assignment]
    services.response_cache = None  # every call goes to the server
    config = RunConfig().with_backend("embedded")
    update = {"model": str(smollm2_gguf()), "max_tokens": 48, "timeout_s": timeout_s}
    roles = {role: config.role(role).model_copy(update=update) for role in ROLES}
    config = config.model_copy(update={"protocol": "single", "corpus": "demo", **roles})
    signalled: list[int] = []
    events: list[Event] = []
    try:
        for evt in stream_run("Antibiotics cure viral infections such as the flu", config, services):
            events.append(evt)
            if isinstance(evt, ModelCallCompleted) and not signalled:
                state = server.read_state(settings.model_cache)
                assert state is not None
                os.kill(state.pid, sig)
                signalled.append(state.pid)
    finally:
        for pid in signalled:  # a stopped server the run failed to kill must not stay behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server.stop_server(settings.model_cache)
    assert signalled, "the server got the signal after its first answer"
    return events


def test_a_run_whose_server_is_killed_starts_it_again_and_completes(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> None:
    events = run_and_signal_the_server(signal.SIGKILL, tmp_path, demo_data_dir, embedder, timeout_s=300.0)
    assert isinstance(events[-1], VerdictReached), events[-1]
    restarted = [e for e in events if isinstance(e, ModelServerRestarted)]
    assert len(restarted) == 1 and "Connection" in restarted[0].reason


def test_a_run_whose_server_hangs_stops_it_starts_another_and_completes(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> None:
    """SIGSTOP: the server runs and its port takes connections, but answers nothing; the call times out (here in 15 s)."""
    started = time.perf_counter()
    events = run_and_signal_the_server(signal.SIGSTOP, tmp_path, demo_data_dir, embedder, timeout_s=15.0)
    assert isinstance(events[-1], VerdictReached), events[-1]
    restarted = [e for e in events if isinstance(e, ModelServerRestarted)]
    assert len(restarted) == 1 and restarted[0].reason.startswith("hung: "), restarted
    assert time.perf_counter() - started < 240, "one timeout, one health check, one start: not a run's worth of timeouts"
