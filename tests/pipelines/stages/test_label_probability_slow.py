"""The embedded backend returns label probabilities (a llama.cpp server with logits_all, on SmolLM2-135M)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.run.llm import embedded
from pipelines.run.llm.client import LLM
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from tests.conftest import smollm2_gguf

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

pytestmark = pytest.mark.slow
OPTIONS = ("TRUE", "FALSE")
MESSAGES = [
    SystemMessage("Answer with exactly one word from the options and nothing else."),
    HumanMessage(f"Claim: Water is wet.\n{options_line(OPTIONS)}"),
]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppSettings]:
    cache = tmp_path_factory.mktemp("model-cache")
    yield AppSettings(model_cache=cache)
    embedded.stop_server(cache)


def _llm(settings: AppSettings, logprobs: bool) -> LLM:
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=16, logprobs=logprobs)
    return LLM(embedded.build_embedded(spec, settings), role="judge", model_name="smollm2")


async def test_a_server_with_logits_all_gives_token_probabilities(settings: AppSettings) -> None:
    llm = _llm(settings, logprobs=True)

    reply = await llm.reply(MESSAGES, logprobs=True, top_logprobs=10, max_tokens=4)
    result = await estimate_label_probabilities(llm, MESSAGES, OPTIONS)

    assert reply.has_logprobs and len(reply.tokens[0].top) >= 2
    assert result.method == "logprobs", result.note
    assert sum(result.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert 0 < result.coverage <= 1.0001


async def test_without_the_opt_in_the_same_server_is_not_asked_and_answers_are_sampled(settings: AppSettings) -> None:
    llm = _llm(settings, logprobs=False)  # reuses the running server; the request carries no logprobs

    reply = await llm.reply(MESSAGES, logprobs=True, top_logprobs=10, max_tokens=4)
    result = await estimate_label_probabilities(llm, MESSAGES, OPTIONS, samples=4)

    assert not reply.has_logprobs
    assert result.method == "sampling" and "no token probabilities" in result.note
