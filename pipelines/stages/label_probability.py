"""Label probabilities: how likely a model finds each answer of a fixed set (labels, STOP/CONTINUE).

Read from the answer's token log-probabilities where the backend gives them (the options'
share of the probability mass at the first answer token); where it gives none, estimated
by sampling several answers and counting. The result says which way it was read, so the
UI can tell the checker.

The prompt must end with an ``Options: A | B | C`` line (``options_line``) and ask for
exactly one of them; the fake backend answers such prompts with a distribution too.
"""

from __future__ import annotations

import asyncio
import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import BaseMessage

from pipelines.core.errors import ModelOutputError
from pipelines.core.events import LabelProbabilitiesEstimated
from pipelines.run.context import RunContext
from pipelines.run.llm.client import LLM, TokenLogprob

Method = Literal["logprobs", "sampling"]
NO_LOGPROBS_NOTE = (
    "the model returned no token probabilities, so they were estimated from {n} sampled answers "
    "(embedded backend: switch on 'Token probabilities' under Models per role)"
)
OFF_OPTIONS_NOTE = "the answer did not start with one of the options, so probabilities were estimated from {n} sampled answers"

# LLMs (one per role and run) known to give no token probabilities: later estimates skip the probe.
_WITHOUT_LOGPROBS: weakref.WeakSet[LLM] = weakref.WeakSet()


@dataclass(frozen=True)
class LabelDistribution:
    """Probabilities over the options, how they were obtained, and how much they cover."""

    probabilities: dict[str, float]
    method: Method
    samples: int = 0
    coverage: float = 1.0  # logprobs: the options' share of the first token's probability mass
    note: str = ""
    answers: tuple[str, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        return max(self.probabilities, key=lambda o: self.probabilities[o])

    @property
    def confidence(self) -> float:
        return max(self.probabilities.values())

    def p(self, option: str) -> float:
        return self.probabilities.get(option, 0.0)


def options_line(options: Sequence[str]) -> str:
    """The line that tells the model (and the fake) which answers are allowed."""
    return "Options: " + " | ".join(options)


async def estimate_label_probabilities(
    llm: LLM,
    messages: Sequence[BaseMessage],
    options: Sequence[str],
    *,
    top_logprobs: int = 10,
    samples: int = 5,
    temperature: float = 0.8,
    max_tokens: int = 8,
) -> LabelDistribution:
    """Probabilities over ``options`` for the answer ``messages`` ask for.

    Raises ModelOutputError when neither the probabilities nor any sampled answer name an option.
    """
    options = tuple(options)
    note = NO_LOGPROBS_NOTE
    # 1. one answer with its token probabilities (skipped once the model is known to give none)
    if llm not in _WITHOUT_LOGPROBS:
        reply = await llm.reply(messages, logprobs=True, top_logprobs=top_logprobs, max_tokens=max_tokens)
        if reply.has_logprobs:
            read = distribution_from_logprobs(reply.tokens, options)
            if read is not None:
                probabilities, coverage = read
                return LabelDistribution(probabilities, "logprobs", coverage=round(coverage, 4), answers=(reply.text,))
            note = OFF_OPTIONS_NOTE
        else:
            _WITHOUT_LOGPROBS.add(llm)
    # 2. sample and count
    return await _sample(llm, messages, options, samples=samples, temperature=temperature, max_tokens=max_tokens, note=note)


def distribution_from_logprobs(tokens: Sequence[TokenLogprob], options: Sequence[str]) -> tuple[dict[str, float], float] | None:
    """The options' probabilities at the first answer token, renormalised, and the mass they cover.

    A token that starts several options (or that several options start with) shares its
    mass among them equally. None when no alternative at that position names an option.
    """
    position = next((t for t in tokens if re.search(r"[A-Za-z0-9]", t.token)), None)
    if position is None:
        return None
    alternatives = position.top or ((position.token, position.logprob),)
    mass = dict.fromkeys(options, 0.0)
    covered = 0.0
    for token, logprob in alternatives:
        matched = _options_for_token(token, options)
        if not matched:
            continue
        p = _exp(logprob)
        covered += p
        for option in matched:
            mass[option] += p / len(matched)
    if covered <= 0:
        return None
    return {o: round(m / covered, 4) for o, m in mass.items()}, covered


def match_option(text: str, options: Sequence[str]) -> str | None:
    """The option a free-text answer names: the longest option its first words spell (so HALF-TRUE beats TRUE)."""
    cleaned = _normal(text)
    for option in sorted(options, key=len, reverse=True):
        if re.match(rf"{re.escape(_normal(option))}(?![A-Z0-9])", cleaned):
            return option
    found = [o for o in sorted(options, key=len, reverse=True) if re.search(rf"(?<![A-Z-]){re.escape(_normal(o))}(?![A-Z-])", cleaned)]
    return found[0] if found else None


def report(ctx: RunContext, distribution: LabelDistribution, *, agent: str, round: int) -> None:
    """Emit the distribution as an event (the UI notes when it was sampled rather than read)."""
    ctx.emit(
        LabelProbabilitiesEstimated(
            agent=agent,
            round=round,
            probabilities=distribution.probabilities,
            method=distribution.method,
            samples=distribution.samples,
            note=distribution.note,
        )
    )


async def _sample(
    llm: LLM, messages: Sequence[BaseMessage], options: tuple[str, ...], *, samples: int, temperature: float, max_tokens: int, note: str
) -> LabelDistribution:
    # Distinct seeds: a server that reuses one seed per request would give the same answer n times.
    replies = await asyncio.gather(
        *(llm.reply(messages, temperature=temperature, seed=seed, max_tokens=max_tokens) for seed in range(1, samples + 1))
    )
    answers = tuple(r.text for r in replies)
    named = [m for m in (match_option(a, options) for a in answers) if m is not None]
    if not named:
        raise ModelOutputError(
            f"{llm.model_name} named none of {', '.join(options)} in {samples} sampled answers (e.g. {answers[0][:80]!r})"
        )
    counts = {o: named.count(o) for o in options}
    probabilities = {o: round(c / len(named), 4) for o, c in counts.items()}
    return LabelDistribution(probabilities, "sampling", samples=len(named), note=note.format(n=samples), answers=answers)


def _options_for_token(token: str, options: Sequence[str]) -> list[str]:
    cleaned = _normal(token).strip("-")
    if not cleaned:
        return []
    return [o for o in options if _token_names(cleaned, _normal(o))]


def _token_names(token: str, option: str) -> bool:
    # A one-letter option (A, B, C) is named only by that letter: "Answer" starts with A but is no answer.
    if len(option) == 1:
        return token == option
    return option.startswith(token) or token.startswith(option)


def _normal(text: str) -> str:
    # Upper case, punctuation and markup around words dropped, hyphens and single spaces kept.
    return " ".join(re.sub(r"[^A-Z0-9\- ]", " ", text.upper()).split())


def _exp(logprob: float) -> float:
    return math.exp(logprob) if logprob > -700 else 0.0
