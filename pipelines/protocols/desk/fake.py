"""How the fake plays desk: a stance for one exhibit, over lettered options whose order changes between calls.

Every stance question offers the letters A, B and C: the separate one ("The passage supports
the claim." ...), the contrast one (the claim, its opposite, "Neither: ...") and the verdict one
("The statement is accurate." ...).
"""

from __future__ import annotations

import re

from pipelines.run.llm.fake.prompt import SUPPORT_AT, PromptView, has_negation, overlap
from pipelines.run.llm.fake.registry import choice_responder, text_responder
from pipelines.run.llm.fake.responders.belief import BELIEF_QUESTION, belief

_STANCE_OPTION = re.compile(r"^([ABC])\. The passage (supports|contradicts|does not address) the claim\.$", re.MULTILINE)
FIRST_POSITION_PULL = 0.1  # extra mass on option A whatever it stands for, as small models have: averaging orders cancels it


@choice_responder("A", "B", "C")
def desk_stance(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    if "Which statement does the passage support?" in view.text:
        return desk_contrast(view, options)
    if "What does the evidence show?" in view.text:
        return desk_verdict(view, options)
    if BELIEF_QUESTION in view.text:  # every protocol's belief after a round asks over the same letters
        return belief(view, options)
    meaning = {letter: word for letter, word in _STANCE_OPTION.findall(view.text)}
    if not meaning:
        return {o: 1 / len(options) for o in options}
    stance = {"SUPPORTS": "supports", "REFUTES": "contradicts", "NOT ENOUGH INFO": "does not address"}[view.label()]
    strength = 0.45 + 0.4 * min(1.0, view.best_overlap())
    rest = (1 - strength) / 2
    distribution = {letter: strength if word == stance else rest for letter, word in meaning.items()}
    distribution["A"] = distribution.get("A", 0.0) + FIRST_POSITION_PULL
    return distribution


_CONTRAST_OPTION = re.compile(r"^([ABC])\. (.+)$", re.MULTILINE)
_NEITHER = "Neither:"


def desk_contrast(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    """Which of two opposite statements the passage supports: the one that shares its words and its negation, else neither."""
    if not view.evidence:
        return {o: 1 / len(options) for o in options}
    passage = next(iter(view.evidence.values()))
    answers = dict(_CONTRAST_OPTION.findall(view.text))
    statements = {letter: text for letter, text in answers.items() if not text.startswith(_NEITHER)}
    neither = next((letter for letter, text in answers.items() if text.startswith(_NEITHER)), "C")
    bearing = max((overlap(text, passage) for text in statements.values()), default=0.0)
    if bearing < SUPPORT_AT:
        # The less the passage shares with the statements, the surer it is neither (a deep exhibit list is mostly these).
        chosen = neither
        strength = 0.95 - 0.5 * bearing / SUPPORT_AT
    else:
        chosen = next((letter for letter, text in statements.items() if has_negation(text) == has_negation(passage)), neither)
        strength = 0.45 + 0.4 * min(1.0, bearing)
    rest = (1 - strength) / 2
    distribution = {letter: strength if letter == chosen else rest for letter in ("A", "B", "C")}
    distribution["A"] += FIRST_POSITION_PULL
    return distribution


_VERDICT_OPTION = re.compile(r"^([ABC])\. The (statement is accurate|statement is inaccurate|evidence does not say)\.$", re.MULTILINE)


def desk_verdict(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    """Whether the evidence shows the statement accurate: it shares the statement's words and its negation; inaccurate: the
    words but not the negation; else it does not say."""
    meaning = {words: letter for letter, words in _VERDICT_OPTION.findall(view.text)}
    statement = view.field("Statement")
    if not view.evidence or len(meaning) != 3 or not statement:
        return {o: 1 / len(options) for o in options}
    passage = next(iter(view.evidence.values()))
    bearing = overlap(statement, passage)
    if bearing < SUPPORT_AT:
        chosen, strength = meaning["evidence does not say"], 0.95 - 0.5 * bearing / SUPPORT_AT
    else:
        same = has_negation(statement) == has_negation(passage)
        chosen, strength = meaning["statement is accurate" if same else "statement is inaccurate"], 0.45 + 0.4 * min(1.0, bearing)
    rest = (1 - strength) / 2
    distribution = {letter: strength if letter == chosen else rest for letter in ("A", "B", "C")}
    distribution["A"] += FIRST_POSITION_PULL
    return distribution


@text_responder("Rewrite the claim so that it says the opposite")
def desk_negation(view: PromptView) -> str:
    """The claim with its negation taken away, or a "not" put in: the fake then reads the exhibits the other way round."""
    claim = view.text.rsplit("\n", 1)[-1].strip()
    without = re.sub(r"\b(not|no|never)\s+", "", claim, count=1, flags=re.IGNORECASE)
    if without != claim:
        return without
    with_not = re.sub(r"\b(is|are|was|were|can|does|do|will|has|have)\b", r"\1 not", claim, count=1)
    return with_not if with_not != claim else f"It is not true that {claim[:1].lower()}{claim[1:]}"
