"""The `openai` backend against a stock llama-cpp-python server (SmolLM2-135M on loopback): structured calls fall back and work."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.events import ModelCallCompleted
from pipelines.run.llm import structured_modes
from pipelines.run.llm.client import LLM
from pipelines.run.llm.openai_backend import build_openai
from tests.conftest import smollm2_gguf

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
pytestmark = pytest.mark.slow


class Colour(BaseModel):
    colour: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("w")
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen([*command, "--n_ctx", "1024", "--n_threads", "1"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    try:
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=2)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"llama_cpp.server exited: see {log.name}")
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not start within 180 s")
        yield url + "/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_stock_llama_cpp_server_falls_back_from_json_schema_and_says_so(server: str) -> None:
    structured_modes.forget_all()
    calls: list[ModelCallCompleted] = []
    spec = ModelSpec(backend="openai", model="smollm2", base_url=server, api_key="none", max_tokens=48, timeout_s=120)  # type: ignore[arg-type]
    llm = LLM(build_openai(spec, AppSettings()), role="debater", model_name="smollm2", max_retries=3, on_call=calls.append)
    messages = [SystemMessage("You answer in JSON."), HumanMessage("Name one colour of the sky.")]
    answer = asyncio.run(llm.structured(messages, Colour))
    assert isinstance(answer, Colour) and answer.colour.strip()
    modes = {c.structured for c in calls}
    assert modes and "json_schema" not in modes, "the server refuses json_schema (HTTP 500), so another mode answered"
    assert structured_modes.known_mode(structured_modes.endpoint_of(llm.chat, "smollm2")) in ("json_object", "prompt")
