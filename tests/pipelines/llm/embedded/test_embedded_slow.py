"""The embedded backend end to end on SmolLM2-135M: the Python llama.cpp server (llama_cpp.server, grammar-first), streaming, a schema.

llama.cpp's own server, which the app prefers where `make model` built it, has its own tests: test_native_server_slow.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.run.llm import embedded
from pipelines.run.llm.embedded import server
from tests.conftest import smollm2_gguf
from tests.pipelines.llm.embedded.conftest import Answer

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

pytestmark = pytest.mark.slow
# Each async test runs on its own event loop while the chat model is shared: that is
# how the app calls it too (an `asyncio.run` per run), and it once broke on pooled
# connections left over from the previous loop.


@pytest.fixture(scope="module")
def cache_dir(model_cache: Path) -> Path:
    return model_cache


@pytest.fixture(scope="module")
def chat(cache_dir: Path) -> BaseChatModel:
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=64)
    return embedded.build_embedded(spec, AppSettings(model_cache=cache_dir, llama_server="python"))


async def test_streams_a_short_answer(chat: BaseChatModel) -> None:
    pieces = [str(chunk.content) async for chunk in chat.astream([HumanMessage("Name one colour.")])]

    assert len(pieces) > 1
    assert "".join(pieces).strip()


async def test_structured_answer_follows_the_schema(chat: BaseChatModel) -> None:
    messages = [
        SystemMessage("You are a fact-checker. Answer in JSON."),
        HumanMessage("Claim: water boils at 100 C at sea level. Evidence: textbooks agree."),
    ]
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": Answer.__name__, "schema": Answer.model_json_schema(), "strict": False},
    }

    message = await chat.ainvoke(messages, response_format=response_format)

    # The grammar forces the label into the enum even for a 135M model; only a cut-off
    # `reason` could break the JSON, so the answer must parse as a whole.
    answer = Answer.model_validate(json.loads(str(message.content)))
    assert answer.label in {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}


def test_a_second_call_reuses_the_running_server(chat: BaseChatModel, cache_dir: Path) -> None:
    state = json.loads((cache_dir / "server.json").read_text())

    base_url = embedded.ensure_server(Path(state["model"]), cache_dir)

    assert base_url == f"http://127.0.0.1:{state['port']}/v1"
    assert json.loads((cache_dir / "server.json").read_text())["pid"] == state["pid"]


def test_the_server_decodes_schema_answers_grammar_first(chat: BaseChatModel, cache_dir: Path) -> None:
    state = json.loads((cache_dir / "server.json").read_text())
    arguments = psutil.Process(state["pid"]).cmdline()
    assert server.SERVER_MODULE in arguments, "the app starts its own server entry point, not llama_cpp.server's"


def test_grammar_first_picks_the_same_tokens_as_the_library(chat: BaseChatModel, cache_dir: Path) -> None:
    from llama_cpp import Llama

    from pipelines.run.llm.embedded import grammar_server

    state = json.loads((cache_dir / "server.json").read_text())
    llm = Llama(model_path=state["model"], n_ctx=1024, n_threads=1, verbose=False)
    schema = {"type": "object", "properties": {"questions": {"type": "array", "items": {"type": "string"}}}, "required": ["questions"]}
    messages = [{"role": "user", "content": "Write two questions about masks and viruses as JSON."}]
    answers = []
    for install in (grammar_server.uninstall, grammar_server.install):
        install()
        llm.reset()
        reply = llm.create_chat_completion(
            messages=messages, response_format={"type": "json_object", "schema": schema}, temperature=0.0, max_tokens=80
        )
        answers.append(reply["choices"][0]["message"]["content"])
    grammar_server.uninstall()
    assert answers[0] == answers[1]
    assert isinstance(json.loads(answers[1])["questions"], list)


def test_another_process_reuses_it_and_leaves_it_running(chat: BaseChatModel, cache_dir: Path) -> None:
    state = json.loads((cache_dir / "server.json").read_text())
    script = "import sys; from pathlib import Path; from pipelines.run.llm.embedded import ensure_server; print(ensure_server(Path(sys.argv[1]), Path(sys.argv[2])))"

    other = subprocess.run(
        [sys.executable, "-c", script, state["model"], str(cache_dir)],
        cwd=Path(__file__).resolve().parents[4],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )

    assert other.stdout.strip() == f"http://127.0.0.1:{state['port']}/v1"
    assert server.is_live(server.ServerState(**state))


async def test_a_busy_server_is_reused_and_its_stream_not_cut_off(chat: BaseChatModel, cache_dir: Path) -> None:
    state = json.loads((cache_dir / "server.json").read_text())
    stream = chat.astream([HumanMessage("Tell a long story about a ship.")], max_tokens=96, temperature=0)
    pieces = [str((await anext(stream)).content)]  # generating now: the server holds its model lock

    base_url = await asyncio.to_thread(embedded.ensure_server, Path(state["model"]), cache_dir)
    # A second request while the stream runs: by the server's default it would end the
    # stream early, silently; the embedded server queues it instead.
    other = asyncio.create_task(chat.ainvoke([HumanMessage("Say hi.")], max_tokens=4))
    pieces += [str(chunk.content) async for chunk in stream]
    await other

    assert base_url == f"http://127.0.0.1:{state['port']}/v1"
    assert len([piece for piece in pieces if piece]) > 48  # SmolLM2 tells long stories; a cut-off stream stops at once


def test_stop_server_stops_it(chat: BaseChatModel, cache_dir: Path) -> None:
    port = json.loads((cache_dir / "server.json").read_text())["port"]

    assert embedded.stop_server(cache_dir)

    assert not (cache_dir / "server.json").exists()
    assert not server._answers(port, smollm2_gguf().stem)


def test_after_the_server_is_stopped_the_next_model_starts_it_again(chat: BaseChatModel, cache_dir: Path) -> None:
    """What the app does between runs: the stopped server's model no longer serves, a new one starts a server and answers."""
    settings = AppSettings(model_cache=cache_dir, llama_server="python")
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=64)
    before = embedded.build_embedded(spec, settings)
    assert embedded.still_serves(before, settings)
    embedded.stop_server(cache_dir)
    assert not embedded.still_serves(before, settings)

    again = embedded.build_embedded(spec, settings)

    assert embedded.still_serves(again, settings)
    assert again.invoke([HumanMessage(content="Say OK.")]).content
