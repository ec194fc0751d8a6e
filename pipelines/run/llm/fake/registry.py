"""Where the fake's responders are registered: by schema name, by option set, by a prompt marker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipelines.run.llm.fake.prompt import PromptView

Responder = Callable[[PromptView, dict[str, Any]], dict[str, Any]]
RESPONDERS: dict[str, Responder] = {}


def responder(schema_name: str) -> Callable[[Responder], Responder]:
    """Register how the fake answers a structured request for ``schema_name``."""

    def register(fn: Responder) -> Responder:
        RESPONDERS[schema_name] = fn
        return fn

    return register


ChoiceResponder = Callable[[PromptView, tuple[str, ...]], dict[str, float]]
CHOICE_RESPONDERS: dict[frozenset[str], ChoiceResponder] = {}
TextResponder = Callable[[PromptView], str]
TEXT_RESPONDERS: dict[str, TextResponder] = {}


def choice_responder(*options: str) -> Callable[[ChoiceResponder], ChoiceResponder]:
    """Register the fake's probabilities for a prompt whose ``Options:`` line offers exactly ``options``."""

    def register(fn: ChoiceResponder) -> ChoiceResponder:
        CHOICE_RESPONDERS[frozenset(o.upper() for o in options)] = fn
        return fn

    return register


def text_responder(marker: str) -> Callable[[TextResponder], TextResponder]:
    """Register how the fake writes free text for prompts that contain ``marker``."""

    def register(fn: TextResponder) -> TextResponder:
        TEXT_RESPONDERS[marker] = fn
        return fn

    return register
