"""The embedded backend on llama.cpp's own server (llama-server, built by `make model`), on SmolLM2-135M.

Streaming, schema-enforced JSON, label log-probabilities, two calls decoded together, and
the same answers at temperature 0 as the Python server. Skipped where the binary was not
built (CI builds no llama.cpp: `make test` does not run `make model`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psutil
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.run.llm import embedded
from pipelines.run.llm.client import LLM, response_format_for
from pipelines.run.llm.embedded import server
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from tests.conftest import smollm2_gguf
from tests.pipelines.llm.embedded.conftest import Answer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(server.native_server_binary() is None, reason="llama-server is not built (make model)"),
]
OPTIONS = ("TRUE", "FALSE")


@pytest.fixture(scope="module")
def settings(model_cache: Path) -> AppSettings:
    return AppSettings(model_cache=model_cache, llama_threads=1, llama_slots=2)


def _chat(settings: AppSettings, *, logprobs: bool = False, max_tokens: int = 64) -> BaseChatModel:
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=max_tokens, logprobs=logprobs)
    return embedded.build_embedded(spec, settings)


def test_the_app_starts_llama_cpp_s_own_server_with_its_slots(settings: AppSettings) -> None:
    _chat(settings)
    state = server.read_state(settings.model_cache)

    assert state is not None and state.kind == "native" and state.slots == 2 and state.logprobs
    arguments = psutil.Process(state.pid).cmdline()
    assert Path(arguments[0]).name == "llama-server"
    assert arguments[arguments.index("--parallel") + 1] == "2"
    assert server.is_live(state)


async def test_streams_a_short_answer(settings: AppSettings) -> None:
    chat = _chat(settings)

    pieces = [str(chunk.content) async for chunk in chat.astream([HumanMessage("Name one colour.")])]

    assert len([p for p in pieces if p]) > 1
    assert "".join(pieces).strip()


async def test_structured_answer_follows_the_schema(settings: AppSettings) -> None:
    chat = _chat(settings)
    messages = [
        SystemMessage("You are a fact-checker. Answer in JSON."),
        HumanMessage("Claim: water boils at 100 C at sea level. Evidence: textbooks agree."),
    ]

    message = await chat.ainvoke(messages, response_format=response_format_for(Answer))

    answer = Answer.model_validate(json.loads(str(message.content)))  # a 135M model keeps to the enum only under a grammar
    assert answer.label in {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}


async def test_label_probabilities_come_from_first_token_log_probabilities(settings: AppSettings) -> None:
    llm = LLM(_chat(settings, logprobs=True, max_tokens=16), role="judge", model_name="smollm2")
    messages = [
        SystemMessage("Answer with exactly one word from the options and nothing else."),
        HumanMessage(f"Claim: Water is wet.\n{options_line(OPTIONS)}"),
    ]

    reply = await llm.reply(messages, logprobs=True, top_logprobs=10, max_tokens=4)
    result = await estimate_label_probabilities(llm, messages, OPTIONS)

    assert reply.has_logprobs and len(reply.tokens[0].top) == 10
    assert all(b <= a for (_, a), (_, b) in zip(reply.tokens[0].top, reply.tokens[0].top[1:], strict=False)), "best first"
    assert result.method == "logprobs", result.note
    assert sum(result.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert 0 < result.coverage <= 1.0001


async def test_two_concurrent_calls_are_decoded_together(settings: AppSettings) -> None:
    """A short call sent while a long answer streams finishes before it: it was not queued behind it (the Python server queues)."""
    chat = _chat(settings, max_tokens=160)
    stream = chat.astream([HumanMessage("Tell a long story about a ship.")], max_tokens=160, temperature=0)
    pieces = [str((await anext(stream)).content)]  # the long answer is decoding now
    finished: list[str] = []

    async def short_call() -> None:
        message = await chat.ainvoke([HumanMessage("Say hi.")], max_tokens=4, temperature=0)
        finished.append(str(message.content))

    other = asyncio.create_task(short_call())
    after_short: list[str] = []
    async for chunk in stream:
        (after_short if finished else pieces).append(str(chunk.content))
    await other

    assert finished and finished[0].strip()
    assert len([p for p in after_short if p]) > 5, "the long answer went on streaming after the short call had finished"


def test_the_same_tokens_at_temperature_0_as_the_python_server(tmp_path: Path) -> None:
    """Greedy answers, free and schema-enforced, token for token, under the same sampling settings, from fresh servers.

    Fresh: a server that has served other calls may read a prompt's end on top of a cached
    prefix, in another batch, and the rounding then differs; answers can part after a few
    dozen tokens (seen on SmolLM2 after this module's other tests).

    Both are asked for no repeat penalty: llama_cpp.server's default is 1.1 over the last 64
    generated tokens, llama-server's 1.0, and llama-server's window would include the prompt,
    so a penalty could not match anyway (see docs/measurements/2026-11-24-embedded-speed.md).
    """
    same = {"extra_body": {"repeat_penalty": 1.0}}
    native_settings = AppSettings(model_cache=tmp_path / "native", llama_threads=1, llama_slots=2)
    python_settings = AppSettings(model_cache=tmp_path / "python", llama_threads=1, llama_server="python")
    prompts = [
        [HumanMessage("Name three colours.")],
        [SystemMessage("You check claims."), HumanMessage("Claim: the Moon is made of cheese. Is it true? Answer briefly.")],
    ]
    try:
        answers = {}
        for name, chosen in (("native", native_settings), ("python", python_settings)):
            chat = _chat(chosen, max_tokens=32)
            answers[name] = [str(chat.invoke(p, temperature=0, **same).content) for p in prompts]
            structured = chat.invoke(prompts[1], temperature=0, response_format=response_format_for(Answer), **same)
            answers[name].append(str(structured.content))
    finally:
        embedded.stop_server(tmp_path / "native")
        embedded.stop_server(tmp_path / "python")
    assert answers["native"][:2] == answers["python"][:2]
    assert answers["native"][2] == answers["python"][2]
