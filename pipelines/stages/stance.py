"""Exhibit stance: how likely the model finds that one passage supports, contradicts or does not address a claim.

Read from probabilities, never from prose: the prompt lists the three answers as lettered
options and the model's probabilities of the letters at the first answer token are the
stance (``label_probability``; sampled answers are counted where a backend gives no
probabilities). A small model prefers some letters over others whatever they stand for
(Qwen2.5-1.5B's two orders agreed on 65% of Check-COVID claims), so the same question is
asked with the options in several orders and the stances averaged: each answer then sits
in each position equally often and the position's pull cancels.

Two more readers cancel the model's lean towards one answer rather than one position
(Qwen2.5-1.5B reads most passages as "contradicts"):
- the claim's negation, written by the model, is read against the same exhibit too, its
  "supports" counted as the claim's "contradicts" and the other way round;
- worked examples from Check-COVID train (``desk_shots.json``: one passage that supports
  its claim, one that does not address it, one that contradicts it) come before the question.

The ``contrast`` reader asks one question instead of two: the claim and its opposite are
both answers ("A. <claim>", "B. <opposite>", "C. Neither"), and the model says which one
the passage supports. The model then weighs the two statements against each other on the
same passage rather than judging each alone; orders swap the claim's and the opposite's
letters. On gold passages of Check-COVID train it separated SUPPORT from REFUTE claims
better than the separate readings, at a third of their calls (docs/measurements).

The ``verdict`` reader asks a fact-checker's question instead: the passage is evidence gathered
about a statement, and the model says whether it shows the statement accurate, inaccurate, or
does not say; orders swap the first two. On the deciding passage of 100 train claims of each beat
it told supported from refuted claims better than ``contrast`` on political rulings (LIAR-PLUS,
AUC 0.703 against 0.640) and Wikipedia sentences (FM2, 0.740 against 0.661), as well on
Check-COVID's abstracts (0.828 against 0.832), with a quarter fewer tokens and no opposite to
write (docs/measurements/2026-12-02-stance-question.md). Over desk's 10 retrieved exhibits on
40 LIAR-PLUS dev claims the gain did not carry: AUC 0.666 against 0.698, within chance
(docs/measurements/2026-12-03-verdict-reader.md). No calibration ships for it: its
probability is a ranking until a desk calibrates it on its own claims.

The ``contrast`` reader is desk's default (``desk.reader``): over 25 exhibits it rules as well
as ``both`` over 5 and holds the deciding abstract for more claims
(docs/measurements/2026-11-24-deep-exhibits.md). ``both`` asks the separate questions and then
the contrast one, and weighs the contrast reading at ``desk.contrast_share``: on 5 retrieved
exhibits of Check-COVID train the mixture ranked and calibrated better than either alone.

The prompt puts what repeats first (instructions, examples, claim, passage) and the options
last, so the orders of one exhibit share all but their last lines and a server that keeps
its previous prompt (llama.cpp does) reads only those lines again.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from pipelines.core.domain import Evidence
from pipelines.prompts import load_prompt
from pipelines.protocols.desk.settings import CONTRAST_SHARE, DeskConfig
from pipelines.protocols.desk.settings import StanceReader as Reader
from pipelines.run.llm.client import LLM
from pipelines.stages.label_probability import LabelDistribution, estimate_label_probabilities, options_line

StanceKey = Literal["SUPPORTS", "REFUTES", "UNRELATED"]
STANCES: tuple[StanceKey, ...] = ("SUPPORTS", "REFUTES", "UNRELATED")
STANCE_WORDS: dict[StanceKey, str] = {"SUPPORTS": "supports", "REFUTES": "contradicts", "UNRELATED": "does not address"}
_OPTION_TEXT: dict[StanceKey, str] = {
    "SUPPORTS": "The passage supports the claim.",
    "REFUTES": "The passage contradicts the claim.",
    "UNRELATED": "The passage does not address the claim.",
}
_VERDICT_TEXT: dict[StanceKey, str] = {
    "SUPPORTS": "The statement is accurate.",
    "REFUTES": "The statement is inaccurate.",
    "UNRELATED": "The evidence does not say.",
}
LETTERS = ("A", "B", "C")
CONTRAST_ORDERS_MIXED = 2  # with reader "both", the contrast question is asked in its 2 orders (the claim and the opposite swap letters)
NEITHER = "Neither: the passage does not address them."
SWAPPED: dict[StanceKey, StanceKey] = {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS", "UNRELATED": "UNRELATED"}
MAX_SHOTS = 3
NEGATION_TOKENS = 80
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
# The contrast reader's options are the claim (SUPPORTS), its opposite (REFUTES) and "neither": with two
# orders the claim and the opposite swap letters, so a pull towards A or B counts for each side once.
# The verdict reader's (accurate, inaccurate, does not say) swap the same way.
_CONTRAST_ORDERS: dict[int, tuple[tuple[StanceKey, ...], ...]] = {
    1: (("SUPPORTS", "REFUTES", "UNRELATED"),),
    2: (("SUPPORTS", "REFUTES", "UNRELATED"), ("REFUTES", "SUPPORTS", "UNRELATED")),
    3: _ORDERS[3],
    6: _ORDERS[6],
}


@dataclass(frozen=True)
class Stance:
    """One exhibit's stance towards the claim: the averaged probabilities and each order's own."""

    exhibit_id: str
    probabilities: dict[StanceKey, float]
    per_order: tuple[dict[StanceKey, float], ...]  # with a negation read too: the claim's orders, then the negation's (swapped back)
    method: Literal["logprobs", "sampling"]
    note: str = ""
    opposite_from: int = 0  # where the opposite's readings start in per_order (0: the opposite was not read)
    contrast_from: int = 0  # with reader "both": where the contrast question's readings start in per_order

    @property
    def leaning(self) -> StanceKey:
        return max(STANCES, key=lambda s: self.probabilities[s])

    @property
    def orders_agree(self) -> bool:
        """Whether every option order gave the same most likely answer (the claim's orders, the opposite's and the contrast question's, each among themselves)."""
        end = self.contrast_from or len(self.per_order)
        cuts = sorted({0, self.opposite_from, end, len(self.per_order)})
        groups = [self.per_order[a:b] for a, b in itertools.pairwise(cuts) if b > a]
        return all(len({max(STANCES, key=lambda s: p[s]) for p in group}) <= 1 for group in groups)

    def p(self, stance: StanceKey) -> float:
        return self.probabilities[stance]


def option_orders(count: int, reader: Reader = "separate") -> tuple[tuple[StanceKey, ...], ...]:
    """The option orders asked when ``count`` orders are wanted (1, 2, 3 or 6) by ``reader``."""
    try:
        return (_CONTRAST_ORDERS if reader in ("contrast", "verdict") else _ORDERS)[count]
    except KeyError:
        raise ValueError(f"option orders must be one of {', '.join(map(str, ORDER_COUNTS))}, not {count}") from None


def exhibit_line(exhibit: Evidence) -> str:
    """The exhibit as prompts show it: ``[E3] title: text`` on one line, cut at MAX_EXHIBIT_CHARS."""
    text = " ".join(exhibit.text.split())
    if len(text) > MAX_EXHIBIT_CHARS:
        text = text[: MAX_EXHIBIT_CHARS - 3] + "..."
    title = " ".join(exhibit.title.split())
    return f"[{exhibit.id}] {title}: {text}" if title else f"[{exhibit.id}] {text}"


def options_block(order: Sequence[StanceKey], text: dict[StanceKey, str] = _OPTION_TEXT) -> str:
    """The lettered answers in ``order`` (the separate question's words, or ``text``), then the ``Options:`` line the readers look for."""
    lines = [f"{letter}. {text[stance]}" for letter, stance in zip(LETTERS, order, strict=True)]
    return "\n".join([*lines, options_line(LETTERS)])


def contrast_options_block(order: Sequence[StanceKey], claim: str, opposite: str) -> str:
    """The contrast reader's answers in ``order``: the claim, its opposite and "neither", then the ``Options:`` line."""
    text = {"SUPPORTS": " ".join(claim.split()), "REFUTES": " ".join(opposite.split()), "UNRELATED": NEITHER}
    lines = [f"{letter}. {text[stance]}" for letter, stance in zip(LETTERS, order, strict=True)]
    return "\n".join([*lines, options_line(LETTERS)])


ARGUMENT_CHARS = 600  # an argument about an exhibit, as it is read again in the argument's light, is cut here


def argument_text(text: str) -> str:
    """An argument as an exhibit is read again with it: its whitespace folded, cut to ARGUMENT_CHARS."""
    return " ".join(text.split())[:ARGUMENT_CHARS]


def reads_against(cfg: DeskConfig) -> bool:
    """Whether the separate questions are asked against the claim's opposite too (desk.negation, with a reader that asks them)."""
    return cfg.negation and cfg.reader in ("separate", "both")


def asks_contrast(cfg: DeskConfig) -> bool:
    """Whether the reader asks the contrast question (which of the claim and its opposite an exhibit supports)."""
    return cfg.reader in ("contrast", "both")


def writes_opposite(cfg: DeskConfig) -> bool:
    """Whether desk has the model write the claim's opposite before reading: some question reads against it."""
    return reads_against(cfg) or asks_contrast(cfg)


def reads_opposite(cfg: DeskConfig) -> bool:
    """Whether read_stance is handed the opposite as its ``negation`` (what a calibration records as "negation"): the
    separate questions with desk.negation on, the contrast reader always (it is its option B), the verdict question never;
    ``both`` hands its contrast questions the opposite apart."""
    return reads_against(cfg) or cfg.reader == "contrast"


def read_against(cfg: DeskConfig, opposite: str) -> str:
    """The opposite that read_stance's ``negation`` takes under ``cfg`` ('' when it reads none)."""
    return opposite if reads_opposite(cfg) else ""


def takes_shots(reader: Reader) -> bool:
    """Whether ``reader`` shows the worked examples (only the separate question has them)."""
    return reader in ("separate", "both")


async def read_desk_stance(
    llm: LLM, cfg: DeskConfig, claim: str, exhibit: Evidence, *, opposite: str, arguments: Sequence[tuple[str, str]] = ()
) -> Stance:
    """An exhibit's stance read as desk's settings ask: its stance question, option orders, worked examples and the claim's opposite."""
    return await read_stance(
        llm,
        claim,
        exhibit,
        orders=cfg.orders,
        negation=read_against(cfg, opposite),
        shots=cfg.shots,
        arguments=arguments,
        reader=cfg.reader,
        contrast_share=cfg.contrast_share,
        opposite=opposite,
    )


def arguments_block(arguments: Sequence[tuple[str, str]]) -> str:
    """The debate's arguments, when a contested exhibit is read again in their light ('' otherwise)."""
    if not arguments:
        return ""
    lines = ["", "Arguments made about this passage:"]
    lines += [f"{who}: {' '.join(text.split())}" for who, text in arguments]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Shot:
    """A worked example: a claim, a passage and the stance it takes."""

    claim: str
    title: str
    passage: str
    answer: StanceKey
    source: str


@cache
def worked_examples() -> tuple[Shot, ...]:
    """The worked examples shipped in ``pipelines/prompts/desk_shots.json`` (Check-COVID train, MIT licence)."""
    data = json.loads(resources.files("pipelines.prompts").joinpath("desk_shots.json").read_text(encoding="utf-8"))
    return tuple(Shot(**item) for item in data)


def shot_messages(shots: int) -> list[BaseMessage]:
    """The first ``shots`` worked examples as question and answer turns, each answer in a different option position."""
    if not 0 <= shots <= MAX_SHOTS:
        raise ValueError(f"worked examples must be between 0 and {MAX_SHOTS}, not {shots}")
    prompt = load_prompt("desk_stance")
    messages: list[BaseMessage] = []
    for i, shot in enumerate(worked_examples()[:shots]):
        order = option_orders(3)[(i + 1) % 3]
        example = Evidence(id="E1", source="corpus", title=shot.title, text=shot.passage)
        question = prompt.render(claim=shot.claim, exhibit=exhibit_line(example), arguments="", options=options_block(order))[1]
        messages += [HumanMessage(content=question.content), AIMessage(content=LETTERS[order.index(shot.answer)])]
    return messages


async def read_stance(
    llm: LLM,
    claim: str,
    exhibit: Evidence,
    *,
    orders: int = 3,
    negation: str = "",
    shots: int = 0,
    arguments: Sequence[tuple[str, str]] = (),
    reader: Reader = "separate",
    contrast_share: float = CONTRAST_SHARE,
    opposite: str = "",
    top_logprobs: int = 10,
    samples: int = 5,
) -> Stance:
    """The exhibit's stance, averaged over ``orders`` option orders (asked one after another, so the server reuses the prompt).

    With ``negation`` (the claim's opposite), each order is asked for it too and its
    readings count with "supports" and "contradicts" swapped; ``shots`` worked examples
    come before each question. The ``contrast`` reader asks instead which of the claim and
    ``negation`` the passage supports (the opposite stated plainly when none is given);
    it takes no worked examples. ``verdict`` asks whether the passage shows the claim accurate,
    inaccurate or does not say (no opposite, no worked examples). ``both`` asks the separate questions, then the contrast one
    in its 2 orders (against ``opposite``, else ``negation``), and weighs the contrast reading
    by ``contrast_share``.
    """
    if reader == "contrast":
        return await _read_contrast(llm, claim, exhibit, negation or plain_negation(claim), orders, arguments, top_logprobs, samples)
    if reader == "verdict":
        return await _read_verdict(llm, claim, exhibit, orders, arguments, top_logprobs, samples)
    if reader == "both":
        separate = await read_stance(
            llm,
            claim,
            exhibit,
            orders=orders,
            negation=negation,
            shots=shots,
            arguments=arguments,
            top_logprobs=top_logprobs,
            samples=samples,
        )
        against = opposite or negation or plain_negation(claim)
        contrast = await _read_contrast(llm, claim, exhibit, against, CONTRAST_ORDERS_MIXED, arguments, top_logprobs, samples)
        return mixed(separate, contrast, contrast_share)
    prompt = load_prompt("desk_stance")
    examples = shot_messages(shots)
    per_order: list[dict[StanceKey, float]] = []
    method: Literal["logprobs", "sampling"] = "logprobs"
    note = ""
    for statement, swapped in ((claim, False), (negation, True)):
        if not statement:
            continue
        for order in option_orders(orders):
            system, question = prompt.render(
                claim=statement, exhibit=exhibit_line(exhibit), arguments=arguments_block(arguments), options=options_block(order)
            )
            read = await estimate_label_probabilities(
                llm, [system, *examples, question], LETTERS, top_logprobs=top_logprobs, samples=samples, max_tokens=1
            )
            reading = _by_stance(read, order)
            per_order.append({SWAPPED[s]: p for s, p in reading.items()} if swapped else reading)
            if read.method == "sampling":
                method, note = "sampling", read.note
    opposite_from = len(option_orders(orders)) if negation else 0
    return Stance(
        exhibit_id=exhibit.id,
        probabilities=mean_reading(per_order),
        per_order=tuple(per_order),
        method=method,
        note=note,
        opposite_from=opposite_from,
    )


def mixed(separate: Stance, contrast: Stance, contrast_share: float) -> Stance:
    """One exhibit's stance from both questions: their probabilities weighed, every reading kept (the contrast's last)."""
    if not 0.0 <= contrast_share <= 1.0:
        raise ValueError(f"the contrast question's share must be between 0 and 1, not {contrast_share}")
    probabilities = {
        s: round((1 - contrast_share) * separate.probabilities[s] + contrast_share * contrast.probabilities[s], 4) for s in STANCES
    }
    sampled = "sampling" in (separate.method, contrast.method)
    return Stance(
        exhibit_id=separate.exhibit_id,
        probabilities=probabilities,
        per_order=separate.per_order + contrast.per_order,
        method="sampling" if sampled else "logprobs",
        note=separate.note or contrast.note,
        opposite_from=separate.opposite_from,
        contrast_from=len(separate.per_order),
    )


async def _read_contrast(
    llm: LLM,
    claim: str,
    exhibit: Evidence,
    opposite: str,
    orders: int,
    arguments: Sequence[tuple[str, str]],
    top_logprobs: int,
    samples: int,
) -> Stance:
    prompt = load_prompt("desk_contrast")

    def asked(order: Sequence[StanceKey]) -> list[BaseMessage]:
        options = contrast_options_block(order, claim, opposite)
        return prompt.render(exhibit=exhibit_line(exhibit), arguments=arguments_block(arguments), options=options)

    return await _read_in_orders(llm, exhibit.id, asked, option_orders(orders, "contrast"), top_logprobs, samples)


async def _read_verdict(
    llm: LLM, claim: str, exhibit: Evidence, orders: int, arguments: Sequence[tuple[str, str]], top_logprobs: int, samples: int
) -> Stance:
    prompt = load_prompt("desk_verdict")

    def asked(order: Sequence[StanceKey]) -> list[BaseMessage]:
        return prompt.render(
            exhibit=exhibit_line(exhibit),
            arguments=arguments_block(arguments).rstrip("\n"),
            claim=" ".join(claim.split()),
            options=options_block(order, _VERDICT_TEXT),
        )

    return await _read_in_orders(llm, exhibit.id, asked, option_orders(orders, "verdict"), top_logprobs, samples)


async def _read_in_orders(
    llm: LLM,
    exhibit_id: str,
    asked: Callable[[Sequence[StanceKey]], list[BaseMessage]],
    orders: Sequence[Sequence[StanceKey]],
    top_logprobs: int,
    samples: int,
) -> Stance:
    """One question asked in each of ``orders`` (one after another, so the server reuses all but the options), readings averaged."""
    per_order: list[dict[StanceKey, float]] = []
    method: Literal["logprobs", "sampling"] = "logprobs"
    note = ""
    for order in orders:
        read = await estimate_label_probabilities(llm, asked(order), LETTERS, top_logprobs=top_logprobs, samples=samples, max_tokens=1)
        per_order.append(_by_stance(read, order))
        if read.method == "sampling":
            method, note = "sampling", read.note
    return Stance(exhibit_id=exhibit_id, probabilities=mean_reading(per_order), per_order=tuple(per_order), method=method, note=note)


def mean_reading(per_order: Sequence[dict[StanceKey, float]]) -> dict[StanceKey, float]:
    """An exhibit's readings averaged, each order alike."""
    return {s: round(sum(p[s] for p in per_order) / len(per_order), 4) for s in STANCES}


async def negate(llm: LLM, claim: str) -> tuple[str, bool]:
    """The claim's opposite and whether the model wrote it.

    The model is asked to change as little as it can; when it writes nothing usable (nothing,
    or the claim again) the opposite is stated plainly: "It is not true that ...".
    """
    text = (await llm.reply(load_prompt("desk_negation").render(claim=claim), max_tokens=NEGATION_TOKENS)).text
    lines = [line.strip().strip('"').strip() for line in text.strip().splitlines() if line.strip()]
    negation = lines[0] if lines else ""
    if negation.lower().startswith(("claim:", "rewritten claim:", "opposite:")):
        negation = negation.split(":", 1)[1].strip().strip('"').strip()
    same = " ".join(negation.lower().split()) == " ".join(claim.lower().split())
    if same or len(negation) < 3:
        return plain_negation(claim), False
    return negation[:600], True


def plain_negation(claim: str) -> str:
    """The claim's opposite without a model: "It is not true that <claim>"."""
    text = " ".join(claim.split()).rstrip(".")
    return f"It is not true that {text[:1].lower()}{text[1:]}." if text else ""


def _by_stance(read: LabelDistribution, order: Sequence[StanceKey]) -> dict[StanceKey, float]:
    return {stance: read.p(letter) for letter, stance in zip(LETTERS, order, strict=True)}
