"""Exhibit stance: how likely the model finds that one passage supports, contradicts or does not address a claim.

Read from probabilities, never from prose: the prompt lists the three answers as lettered
options and the model's probabilities of the letters at the first answer token are the
stance (``label_probability``; sampled answers are counted where a backend gives no
probabilities). A small model prefers some letters over others whatever they stand for
(Qwen2.5-1.5B's two orders agreed on 65% of Check-COVID claims), so the same question is
asked with the options in several orders and the stances averaged: each answer then sits
in each position equally often and the position's pull cancels.

The prompt puts what repeats first (instructions, claim, passage) and the options last, so
the orders of one exhibit share all but their last lines and a server that keeps its
previous prompt (llama.cpp does) reads only those lines again.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pipelines.llm.client import LLM
from pipelines.models import Evidence
from pipelines.prompts import load_prompt
from pipelines.stages.label_probability import LabelDistribution, estimate_label_probabilities, options_line

StanceKey = Literal["SUPPORTS", "REFUTES", "UNRELATED"]
STANCES: tuple[StanceKey, ...] = ("SUPPORTS", "REFUTES", "UNRELATED")
STANCE_WORDS: dict[StanceKey, str] = {"SUPPORTS": "supports", "REFUTES": "contradicts", "UNRELATED": "does not address"}
_OPTION_TEXT: dict[StanceKey, str] = {
    "SUPPORTS": "The passage supports the claim.",
    "REFUTES": "The passage contradicts the claim.",
    "UNRELATED": "The passage does not address the claim.",
}
LETTERS = ("A", "B", "C")
MAX_EXHIBIT_CHARS = 2400  # a passage is a few hundred characters; a whole document (desk.unit) is cut here

# Orders of the options by how many are asked for: with three, each answer takes each position once;
# with two, the first and last positions (where the pull is strongest) swap.
_ORDERS: dict[int, tuple[tuple[StanceKey, ...], ...]] = {
    1: (("SUPPORTS", "REFUTES", "UNRELATED"),),
    2: (("SUPPORTS", "REFUTES", "UNRELATED"), ("UNRELATED", "REFUTES", "SUPPORTS")),
    3: (("SUPPORTS", "REFUTES", "UNRELATED"), ("REFUTES", "UNRELATED", "SUPPORTS"), ("UNRELATED", "SUPPORTS", "REFUTES")),
    6: tuple(itertools.permutations(STANCES)),  # type: ignore[arg-type]
}
ORDER_COUNTS = tuple(_ORDERS)


@dataclass(frozen=True)
class Stance:
    """One exhibit's stance towards the claim: the averaged probabilities and each order's own."""

    exhibit_id: str
    probabilities: dict[StanceKey, float]
    per_order: tuple[dict[StanceKey, float], ...]
    method: Literal["logprobs", "sampling"]
    note: str = ""

    @property
    def leaning(self) -> StanceKey:
        return max(STANCES, key=lambda s: self.probabilities[s])

    @property
    def orders_agree(self) -> bool:
        """Whether every option order gave the same most likely answer."""
        return len({max(STANCES, key=lambda s: p[s]) for p in self.per_order}) == 1

    def p(self, stance: StanceKey) -> float:
        return self.probabilities[stance]


def option_orders(count: int) -> tuple[tuple[StanceKey, ...], ...]:
    """The option orders asked when ``count`` orders are wanted (1, 2, 3 or 6)."""
    try:
        return _ORDERS[count]
    except KeyError:
        raise ValueError(f"option orders must be one of {', '.join(map(str, ORDER_COUNTS))}, not {count}") from None


def exhibit_line(exhibit: Evidence) -> str:
    """The exhibit as prompts show it: ``[E3] title: text`` on one line, cut at MAX_EXHIBIT_CHARS."""
    text = " ".join(exhibit.text.split())
    if len(text) > MAX_EXHIBIT_CHARS:
        text = text[: MAX_EXHIBIT_CHARS - 3] + "..."
    title = " ".join(exhibit.title.split())
    return f"[{exhibit.id}] {title}: {text}" if title else f"[{exhibit.id}] {text}"


def options_block(order: Sequence[StanceKey]) -> str:
    """The lettered answers in ``order``, then the ``Options:`` line the readers look for."""
    lines = [f"{letter}. {_OPTION_TEXT[stance]}" for letter, stance in zip(LETTERS, order, strict=True)]
    return "\n".join([*lines, options_line(LETTERS)])


def arguments_block(arguments: Sequence[tuple[str, str]]) -> str:
    """The debate's arguments, when a contested exhibit is read again in their light ('' otherwise)."""
    if not arguments:
        return ""
    lines = ["", "Arguments made about this passage:"]
    lines += [f"{who}: {' '.join(text.split())}" for who, text in arguments]
    return "\n".join(lines) + "\n"


async def read_stance(
    llm: LLM,
    claim: str,
    exhibit: Evidence,
    *,
    orders: int = 3,
    arguments: Sequence[tuple[str, str]] = (),
    top_logprobs: int = 10,
    samples: int = 5,
) -> Stance:
    """The exhibit's stance, averaged over ``orders`` option orders (asked one after another, so the server reuses the prompt)."""
    prompt = load_prompt("desk_stance")
    per_order: list[dict[StanceKey, float]] = []
    method: Literal["logprobs", "sampling"] = "logprobs"
    note = ""
    for order in option_orders(orders):
        messages = prompt.render(
            claim=claim, exhibit=exhibit_line(exhibit), arguments=arguments_block(arguments), options=options_block(order)
        )
        read = await estimate_label_probabilities(llm, messages, LETTERS, top_logprobs=top_logprobs, samples=samples, max_tokens=1)
        per_order.append(_by_stance(read, order))
        if read.method == "sampling":
            method, note = "sampling", read.note
    averaged = {s: round(sum(p[s] for p in per_order) / len(per_order), 4) for s in STANCES}
    return Stance(exhibit_id=exhibit.id, probabilities=averaged, per_order=tuple(per_order), method=method, note=note)


def _by_stance(read: LabelDistribution, order: Sequence[StanceKey]) -> dict[StanceKey, float]:
    return {stance: read.p(letter) for letter, stance in zip(LETTERS, order, strict=True)}
