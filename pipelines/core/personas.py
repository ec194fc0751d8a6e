"""Roles are data: a debater is one class of agent whatever side it argues; a role says who it plays."""

from __future__ import annotations

from dataclasses import dataclass

HUMAN_CHECKER = "Human checker"  # who searched, when the person at the desk added queries in step mode


@dataclass(frozen=True)
class Persona:
    """Who an agent plays: the name shown in the transcript and the brief its prompt carries."""

    name: str
    brief: str


MAD_DEBATERS = (
    Persona("Debater A", "Argue for the reading of the claim you find most likely, and test the other debater's reasoning."),
    Persona("Debater B", "Argue for the reading of the claim you find most likely, and test the other debater's reasoning."),
)

POLITICIAN = Persona(
    "Politician",
    "You build the strongest evidence-backed account of the claim, as a skilled politician would present it: "
    "the facts in its favour, framed persuasively, never invented.",
)
SCIENTIST = Persona(
    "Scientist",
    "You look for missing, weak or selectively framed context: what the claim leaves out that would change how a "
    "reader understands it. Put each omitted point on its own line starting with 'Omitted:' and cite the evidence "
    "that shows it, e.g. 'Omitted: the effect was only seen in older adults [E4]'.",
)

MADKE_DEBATERS = (
    Persona("Debater A", "Reason carefully from the evidence you pick; say when the pool does not settle the question."),
    Persona("Debater B", "Reason carefully from the evidence you pick; challenge conclusions the evidence does not carry."),
)
