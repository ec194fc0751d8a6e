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
