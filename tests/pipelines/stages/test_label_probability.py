"""Label probabilities: read from token logprobs, or sampled and counted where a backend gives none."""

import math

import pytest
from langchain_core.messages import HumanMessage

from pipelines.core.errors import ModelOutputError
from pipelines.run.llm.client import LLM, TokenLogprob
from pipelines.run.llm.fake import FakeChatModel
from pipelines.stages.label_probability import (
    LabelDistribution,
    distribution_from_logprobs,
    estimate_label_probabilities,
    match_option,
    options_line,
)

LABELS = ("TRUE", "HALF-TRUE", "FALSE")
PROMPT = [HumanMessage(f"Claim: masks reduce transmission\n[E1] Masks reduce transmission of viruses.\n{options_line(LABELS)}")]


def _token(top: dict[str, float], token: str | None = None) -> TokenLogprob:
    chosen = token or max(top, key=lambda t: top[t])
    return TokenLogprob(token=chosen, logprob=math.log(top[chosen]), top=tuple((t, math.log(p)) for t, p in top.items()))


def test_first_token_mass_is_shared_out_to_the_options_it_starts() -> None:
    tokens = [_token({"HALF": 0.5, "TRUE": 0.3, "FALSE": 0.1, "The": 0.1}), TokenLogprob("-", -0.01), TokenLogprob("TRUE", -0.01)]

    probabilities, coverage = distribution_from_logprobs(tokens, LABELS)  # type: ignore[misc]

    assert probabilities == pytest.approx({"TRUE": 0.3 / 0.9, "HALF-TRUE": 0.5 / 0.9, "FALSE": 0.1 / 0.9}, abs=1e-3)
    assert coverage == pytest.approx(0.9)


def test_leading_whitespace_and_markup_tokens_are_skipped() -> None:
    tokens = [TokenLogprob(" ", -0.01), TokenLogprob("**", -0.01), _token({"STOP": 0.7, "CONT": 0.3})]

    probabilities, _ = distribution_from_logprobs(tokens, ("STOP", "CONTINUE"))  # type: ignore[misc]

    assert probabilities == pytest.approx({"STOP": 0.7, "CONTINUE": 0.3})


def test_an_answer_that_starts_with_no_option_gives_no_distribution() -> None:
    assert distribution_from_logprobs([_token({"The": 0.9, "Based": 0.1})], LABELS) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HALF-TRUE", "HALF-TRUE"),
        ("**FALSE**", "FALSE"),
        ("true.", "TRUE"),
        ("The claim is HALF-TRUE.", "HALF-TRUE"),
        ("I cannot tell", None),
    ],
)
def test_match_option_prefers_the_longest_option(text: str, expected: str | None) -> None:
    assert match_option(text, LABELS) == expected


async def test_fake_with_logprobs_is_read_from_logprobs() -> None:
    llm = LLM(FakeChatModel(), role="judge", model_name="fake")

    result = await estimate_label_probabilities(llm, PROMPT, LABELS)

    assert result.method == "logprobs" and result.note == ""
    assert sum(result.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert result.label == "TRUE" and result.coverage == pytest.approx(0.98)


async def test_without_logprobs_it_samples_says_so_and_stops_probing() -> None:
    chat = FakeChatModel(logprobs=False)
    llm = LLM(chat, role="judge", model_name="fake")

    first = await estimate_label_probabilities(llm, PROMPT, LABELS, samples=6)
    calls_after_first = chat.calls
    second = await estimate_label_probabilities(llm, PROMPT, LABELS, samples=6)

    assert first.method == "sampling" and first.samples == 6
    assert "no token probabilities" in first.note
    assert sum(first.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert calls_after_first == 7  # one probe, six samples
    assert chat.calls - calls_after_first == 6  # no second probe
    assert second.probabilities == first.probabilities  # seeded samples repeat


async def test_sampling_that_never_names_an_option_is_an_error() -> None:
    llm = LLM(FakeChatModel(logprobs=False, script=["I am not sure."] * 4), role="judge", model_name="fake")

    with pytest.raises(ModelOutputError, match="named none of"):
        await estimate_label_probabilities(llm, PROMPT, LABELS, samples=3)


def test_confidence_is_the_top_probability() -> None:
    d = LabelDistribution({"TRUE": 0.2, "HALF-TRUE": 0.7, "FALSE": 0.1}, "logprobs")
    assert d.label == "HALF-TRUE" and d.confidence == 0.7
