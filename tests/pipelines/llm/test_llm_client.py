import asyncio

import pytest
from pydantic import BaseModel

from pipelines.errors import BackendUnavailableError, ModelOutputError
from pipelines.events import ModelCallCompleted
from pipelines.llm.client import LLM
from pipelines.llm.fake import FakeChatModel
from pipelines.prompts import load_prompt


class Answer(BaseModel):
    label: str
    reason: str


def make(chat: FakeChatModel, calls: list[ModelCallCompleted] | None = None, retries: int = 2) -> LLM:
    return LLM(chat, role="judge", model_name="fake", max_retries=retries, on_call=(calls.append if calls is not None else None))


def test_streaming_gives_deltas_that_add_up_and_counts_tokens() -> None:
    calls: list[ModelCallCompleted] = []
    deltas: list[str] = []
    messages = load_prompt("single_answer").render(claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses.")
    text = asyncio.run(make(FakeChatModel(), calls).stream(messages, deltas.append))
    assert len(deltas) > 1 and "".join(deltas) == text
    assert text.rstrip().endswith("Label: SUPPORTS")
    assert calls[0].tokens_in > 0 and calls[0].tokens_out > 0


def test_malformed_structured_output_is_retried_then_accepted() -> None:
    calls: list[ModelCallCompleted] = []
    result = asyncio.run(make(FakeChatModel(malformed=2), calls).structured(load_prompt("search_queries").render(claim="c", n=1), Answer))
    assert isinstance(result, Answer) and len(calls) == 3


def test_malformed_structured_output_fails_after_retries_with_a_reason() -> None:
    with pytest.raises(ModelOutputError, match="no valid Answer after 2 tries"):
        asyncio.run(make(FakeChatModel(malformed=5), retries=1).structured(load_prompt("search_queries").render(claim="c", n=1), Answer))


class CutOff(FakeChatModel):
    """Malformed answers that stopped at the token limit (finish reason "length"), as a runaway JSON string on llama.cpp."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        result = await super()._agenerate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        if message.content and not str(message.content).rstrip().endswith("}"):  # the fake's malformed answer is cut JSON
            message.response_metadata["finish_reason"] = "length"
        return result


def greedy(chat: FakeChatModel, calls: list[ModelCallCompleted], temperature: float | None) -> LLM:
    return LLM(chat, role="scorer", model_name="fake", max_retries=2, on_call=calls.append, params={"temperature": temperature})


def test_an_answer_cut_at_the_token_limit_is_not_retried_at_temperature_0() -> None:
    calls: list[ModelCallCompleted] = []
    messages = load_prompt("search_queries").render(claim="c", n=1)
    with pytest.raises(ModelOutputError, match=r"after 1 try .*cut off at the token limit"):
        asyncio.run(greedy(CutOff(malformed=5), calls, 0).structured(messages, Answer))
    assert len(calls) == 1, "greedy decoding of the same request would repeat the cut-off answer"


def test_a_cut_answer_is_still_retried_when_sampling_and_a_malformed_one_always() -> None:
    calls: list[ModelCallCompleted] = []
    messages = load_prompt("search_queries").render(claim="c", n=1)
    assert isinstance(asyncio.run(greedy(CutOff(malformed=2), calls, 0.7).structured(messages, Answer)), Answer)
    assert len(calls) == 3
    calls.clear()
    assert isinstance(asyncio.run(greedy(FakeChatModel(malformed=2), calls, 0).structured(messages, Answer)), Answer)
    assert len(calls) == 3, "malformed but not cut off: a retry may give another answer"


def test_unreachable_openai_endpoint_gives_a_clear_error() -> None:
    from pipelines.config import AppSettings, ModelSpec
    from pipelines.llm.openai_backend import build_openai

    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:9/v1", timeout_s=3)
    chat = build_openai(spec, AppSettings())
    with pytest.raises(BackendUnavailableError, match="cannot reach the endpoint"):
        asyncio.run(make(chat).text(load_prompt("search_queries").render(claim="c", n=1)))  # type: ignore[arg-type]


def test_concurrency_bound_is_respected() -> None:
    limiter = asyncio.Semaphore(1)

    async def go() -> float:
        llm = LLM(FakeChatModel(latency_s=0.1), role="debater", model_name="fake", limiter=limiter)
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.gather(*(llm.text(load_prompt("search_queries").render(claim="c", n=1)) for _ in range(3)))
        return loop.time() - start

    assert asyncio.run(go()) >= 0.3


class PromptCached(FakeChatModel):
    """Usage as llama.cpp's server reports it: part of each prompt kept from the call before (prompt_tokens_details.cached_tokens)."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        result = await super()._agenerate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        usage = dict(message.usage_metadata or {})
        message.usage_metadata = {**usage, "input_token_details": {"cache_read": usage["input_tokens"] - 3}}  # type: ignore[typeddict-item]
        return result


def test_prompt_tokens_the_server_reused_are_recorded_and_counted_apart() -> None:
    from pipelines.record.digest import Cost

    calls: list[ModelCallCompleted] = []
    messages = load_prompt("single_answer").render(claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses.")
    asyncio.run(make(PromptCached(), calls).reply(messages))
    asyncio.run(make(FakeChatModel(), calls).reply(messages))  # a server that says nothing of its cache: nothing reused
    assert calls[0].tokens_in > 3 and calls[0].tokens_reused == calls[0].tokens_in - 3
    assert calls[1].tokens_reused == 0
    cost = Cost().add_call(calls[0]).add_call(calls[1])
    assert cost.tokens_read == 3 + calls[1].tokens_in + calls[0].tokens_out + calls[1].tokens_out
    assert f"({cost.tokens_reused:,} reused from the server's prompt cache)" in cost.describe()
    assert "reused" not in Cost(calls=1, tokens_in=10).describe()
