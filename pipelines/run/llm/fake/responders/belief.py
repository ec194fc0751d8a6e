"""How the fake reads its belief after a round: the evidence's label, pulled towards the labels the debaters gave so far.

Each turn's ``Label:`` line moves the belief a step towards that label, so the fake's belief
changes from round to round as a real judge's does, and the tests see which round moved it.
"""

from __future__ import annotations

import re

from pipelines.run.llm.fake.prompt import PromptView

BELIEF_QUESTION = "Given the evidence and the debate so far, what is the claim?"
_OPTION = re.compile(r"^([ABC])\. (Supported|Refuted|Not enough information):", re.MULTILINE)
_LABEL_LINE = re.compile(r"^\s*(?:Label|Verdict):\s*([A-Z -]+?)\s*$", re.MULTILINE)
_MEANING = {"Supported": "SUPPORTS", "Refuted": "REFUTES", "Not enough information": "NOT ENOUGH INFO"}
_SAID = {  # each protocol's own labels, as the belief's three
    "SUPPORTS": "SUPPORTS", "SUPPORTED": "SUPPORTS", "TRUE": "SUPPORTS",
    "REFUTES": "REFUTES", "REFUTED": "REFUTES", "NOT SUPPORTED": "REFUTES", "FALSE": "REFUTES",
    "NOT ENOUGH INFO": "NOT ENOUGH INFO", "HALF-TRUE": "NOT ENOUGH INFO",
}  # fmt: skip
TURN_PULL = 0.15  # how far one turn's label moves the belief
FIRST_POSITION_PULL = 0.1  # extra mass on option A whatever it stands for: averaging the two orders cancels it between the sides


def belief(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    meaning = {letter: _MEANING[word] for letter, word in _OPTION.findall(view.text)}
    if not meaning:
        return {o: 1 / len(options) for o in options}
    debate = view.text.split("The debate so far:", 1)[-1]
    strength = 0.4 + 0.4 * min(1.0, view.best_overlap())
    mass = {label: (strength if label == view.label() else (1 - strength) / 2) for label in _MEANING.values()}
    for said in _LABEL_LINE.findall(debate):
        if said in _SAID:
            mass[_SAID[said]] += TURN_PULL
    total = sum(mass.values())
    distribution = {letter: mass[label] / total for letter, label in meaning.items()}
    distribution["A"] = distribution.get("A", 0.0) + FIRST_POSITION_PULL
    return distribution
