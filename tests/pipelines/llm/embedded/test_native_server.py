"""Choosing and starting llama.cpp's own server (no binary or model needed: the start itself is stood in for)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from pipelines.core.errors import BackendUnavailableError
from pipelines.run.llm import embedded
from pipelines.run.llm.client import response_format_for
from pipelines.run.llm.embedded import server


class Answer(BaseModel):
    label: str
    reason: str


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "llama-server"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Each server start ensure_server asks for, answered with a record instead of a process."""
    asked: list[dict[str, Any]] = []

    def start(
        model: Path,
        cache_dir: Path,
        n_ctx: int,
        logprobs: bool,
        threads: int,
        slots: int,
        native: Path | None,
        cache_ram_mib: int = server.DEFAULT_CACHE_RAM_MIB,
    ) -> server.ServerState:
        del cache_ram_mib  # the command line's test covers it
        asked.append({"logprobs": logprobs, "threads": threads, "slots": slots, "native": native})
        kind = "native" if native else "python"
        return server.ServerState(pid=1, port=4000 + len(asked), model=str(model), n_ctx=n_ctx, logprobs=logprobs, kind=kind, slots=slots)

    monkeypatch.setattr(server, "_start_server", start)
    return asked


def test_slots_are_one_on_two_threads_then_one_per_thread_up_to_four() -> None:
    assert [server.default_slots(n) for n in (1, 2, 3, 16)] == [1, 1, 3, 4]
    assert 1 <= server.default_slots() <= server.MAX_SLOTS


def test_the_built_binary_is_used_where_it_exists(monkeypatch: pytest.MonkeyPatch, binary: Path, tmp_path: Path) -> None:
    monkeypatch.setattr(server, "NATIVE_BINARY", tmp_path / "missing" / "llama-server")
    assert server.native_server_binary() is None, "no build: the Python server"
    monkeypatch.setattr(server, "NATIVE_BINARY", binary)
    assert server.native_server_binary() == binary
    assert server.native_server_binary("python") is None, "asked for the Python server"
    assert server.native_server_binary(str(binary)) == binary


def test_a_named_binary_that_is_not_there_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailableError, match="not an executable file"):
        server.native_server_binary(str(tmp_path / "nope"))


def test_the_native_server_is_started_with_slots_and_always_gives_log_probabilities(
    monkeypatch: pytest.MonkeyPatch, binary: Path, tmp_path: Path, starts: list[dict[str, Any]]
) -> None:
    monkeypatch.setattr(server, "NATIVE_BINARY", binary)
    model = tmp_path / "m.gguf"

    server.ensure_server(model, tmp_path / "cache", n_threads=4)

    assert starts == [{"logprobs": True, "threads": 4, "slots": 4, "native": binary}]
    state = server.read_state(tmp_path / "cache")
    assert state is not None and state.kind == "native" and state.slots == 4


def test_the_python_server_is_started_when_asked_for_or_without_a_build(
    monkeypatch: pytest.MonkeyPatch, binary: Path, tmp_path: Path, starts: list[dict[str, Any]]
) -> None:
    monkeypatch.setattr(server, "NATIVE_BINARY", binary)
    server.ensure_server(tmp_path / "m.gguf", tmp_path / "a", n_threads=1, binary="python")
    monkeypatch.setattr(server, "NATIVE_BINARY", tmp_path / "missing")
    server.ensure_server(tmp_path / "m.gguf", tmp_path / "b", n_threads=1, logprobs=True)

    assert starts == [
        {"logprobs": False, "threads": 1, "slots": 1, "native": None},
        {"logprobs": True, "threads": 1, "slots": 1, "native": None},
    ]


def test_llama_server_takes_over_from_the_python_server_once_its_background_build_is_there(
    monkeypatch: pytest.MonkeyPatch, binary: Path, tmp_path: Path, starts: list[dict[str, Any]]
) -> None:
    """`make run` starts the app before llama-server is built: the Python server serves until the program is there."""
    monkeypatch.setattr(server, "is_live", lambda state: True)
    model, cache = tmp_path / "m.gguf", tmp_path / "cache"
    monkeypatch.setattr(server, "NATIVE_BINARY", tmp_path / "missing")
    first = server.ensure_server(model, cache, n_threads=2, logprobs=True)
    assert server.ensure_server(model, cache, n_threads=2, logprobs=True) == first, "still building: the Python server is reused"

    monkeypatch.setattr(server, "NATIVE_BINARY", binary)  # the background build finished
    assert server.ensure_server(model, cache, n_threads=2, binary="python", logprobs=True) == first, "the Python server asked for stays"
    upgraded = server.ensure_server(model, cache, n_threads=2, logprobs=True)

    assert upgraded != first and [s["native"] for s in starts] == [None, binary]
    state = server.read_state(cache)
    assert state is not None and state.kind == "native"
    assert server.ensure_server(model, cache, n_threads=2, logprobs=True) == upgraded, "then llama-server is reused"


def test_the_native_command_line(tmp_path: Path, binary: Path) -> None:
    command = server.native_server_command(tmp_path / "qwen.gguf", 4321, n_ctx=8192, threads=2, slots=4, binary=binary)

    def value(flag: str) -> str:
        return command[command.index(flag) + 1]

    assert command[0] == str(binary)
    assert (value("--alias"), value("--port"), value("--host")) == ("qwen", "4321", "127.0.0.1")
    assert (value("--threads"), value("--threads-batch"), value("--parallel")) == ("2", "2", "4")
    assert value("--ctx-size") == str(8192 * 4), "every slot has the whole context"
    assert value("--flash-attn") == "off", "llama-cpp-python's arithmetic: the same tokens"
    assert "--kv-unified" in command and "--cont-batching" in command and value("--cache-reuse") == "256"
    assert value("--cache-ram") == str(server.DEFAULT_CACHE_RAM_MIB), "the prompt cache is capped on purpose, not llama.cpp's 8 GiB"
    capped = server.native_server_command(tmp_path / "qwen.gguf", 4321, n_ctx=8192, threads=2, slots=1, binary=binary, cache_ram_mib=0)
    assert capped[capped.index("--cache-ram") + 1] == "0"


def test_a_record_from_before_the_native_server_reads_as_the_python_one(tmp_path: Path) -> None:
    (tmp_path / "server.json").write_text(json.dumps({"pid": 5, "port": 6, "model": "m", "n_ctx": 8192, "logprobs": True}))

    state = server.read_state(tmp_path)

    assert state == server.ServerState(pid=5, port=6, model="m", n_ctx=8192, logprobs=True, kind="python", slots=1)


def test_schemas_go_to_the_native_server_as_llama_cpp_python_s_own_grammar() -> None:
    from llama_cpp import llama_grammar

    chat = embedded.LlamaCppChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="x", max_tokens=42)  # type: ignore[arg-type, call-arg]
    chat.grammar_from_schema = True
    schema = response_format_for(Answer)

    payload = chat._get_request_payload([HumanMessage("hi")], response_format=schema)

    assert payload["extra_body"] == {"grammar": llama_grammar.json_schema_to_gbnf(json.dumps(schema["json_schema"]["schema"]))}
    assert "response_format" not in payload
    bare = chat._get_request_payload([HumanMessage("hi")], response_format={"type": "json_object"})
    assert bare["extra_body"] == {"grammar": llama_grammar.JSON_GBNF}


def test_the_shell_s_port_host_and_server_settings_do_not_reach_the_server() -> None:
    """`make run PORT=8503` exports PORT: llama_cpp.server binds os.getenv("PORT") before its --port, so it took the app's port."""
    shell = {"PORT": "8503", "HOST": "0.0.0.0", "N_CTX": "64", "config_file": "x.json", "LLAMA_ARG_HOST": "0.0.0.0", "HOME": "/h"}
    assert server.server_environment(shell) == {"HOME": "/h"}


def test_a_first_claim_waits_for_the_llama_server_build_in_progress_then_starts_it(
    monkeypatch: pytest.MonkeyPatch, binary: Path, tmp_path: Path, starts: list[dict[str, Any]]
) -> None:
    """`make run` compiles llama-server in the background under a flock: a claim started meanwhile waits, then starts it."""
    lock = tmp_path / ".build.lock"
    lock.touch()
    monkeypatch.setattr(server, "BUILD_LOCK", lock)
    monkeypatch.setattr(server, "NATIVE_BINARY", tmp_path / "bin" / "not-yet")
    assert not server.build_in_progress(), "a lock file nobody holds: no build"
    build = subprocess.Popen(["flock", str(lock), "sh", "-c", f"sleep 1.5 && cp {binary} {tmp_path / 'bin' / 'not-yet'}"])
    try:
        deadline = time.monotonic() + 10
        while not server.build_in_progress() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.build_in_progress()
        started = time.monotonic()
        server.ensure_server(tmp_path / "m.gguf", tmp_path / "cache", n_threads=2, logprobs=True)
        assert time.monotonic() - started >= 0.5, "it waited for the build"
    finally:
        build.wait(10)
    assert [s["native"] for s in starts] == [tmp_path / "bin" / "not-yet"], "then llama-server, not the Python server"
    assert not server.build_in_progress()


def test_a_build_that_fails_or_outlasts_the_wait_gives_no_program(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    lock = tmp_path / ".build.lock"
    lock.touch()
    monkeypatch.setattr(server, "NATIVE_BINARY", tmp_path / "missing")
    held = subprocess.Popen(["flock", str(lock), "sleep", "5"])
    try:
        time.sleep(0.3)
        assert server.wait_for_build(lock, timeout_s=0.5) is None
    finally:
        held.kill()
        held.wait()
