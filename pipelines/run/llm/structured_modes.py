"""What an endpoint accepts for structured output, learnt once per endpoint, and the request each mode makes.

OpenAI, vLLM and Ollama take ``response_format`` of type ``json_schema``; llama-cpp-python's
server refuses it with an HTTP 500 (it knows only ``json_object``), and some servers take
neither. A structured call tries the modes in order, ``json_schema`` -> ``json_object`` ->
``prompt``, until the endpoint accepts one; that mode is then used for every later call to
the same endpoint in this process. ``json_object`` and ``prompt`` put the JSON schema in the
prompt; every mode's answer is validated with pydantic and retried when malformed (LLM.structured).
Each ModelCallCompleted says which mode its call used.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

StructuredMode = Literal["json_schema", "json_object", "prompt"]
MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")
# HTTP statuses with which servers refuse a response_format they do not know (llama-cpp-python: 500).
REFUSAL_STATUSES = frozenset({400, 415, 422, 500, 501})

_learnt: dict[tuple[str, str, str], StructuredMode] = {}
_lock = threading.Lock()


def endpoint_of(chat: BaseChatModel, model_name: str) -> tuple[str, str, str]:
    """Which endpoint a chat model talks to: its class, its base URL and the model."""
    return (type(chat).__name__, str(getattr(chat, "openai_api_base", None) or ""), model_name)


def known_mode(endpoint: tuple[str, str, str]) -> StructuredMode | None:
    with _lock:
        return _learnt.get(endpoint)


def learn(endpoint: tuple[str, str, str], mode: StructuredMode) -> None:
    with _lock:
        _learnt[endpoint] = mode


def forget_all() -> None:
    """For tests: every endpoint is unknown again."""
    with _lock:
        _learnt.clear()


def refused_format(exc: BaseException) -> bool:
    """Whether a failed call looks like the endpoint refusing the request's format (then the next mode is tried)."""
    for error in (exc, exc.__cause__):
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and status in REFUSAL_STATUSES:
            return True
    return False


def request_for(
    messages: Sequence[BaseMessage], schema: type[BaseModel], mode: StructuredMode, response_format: dict[str, Any]
) -> tuple[list[BaseMessage], dict[str, Any]]:
    """The messages and call parameters of a structured call in ``mode``."""
    if mode == "json_schema":
        return list(messages), {"response_format": response_format}
    instruction = HumanMessage(
        "Answer with one JSON object and nothing else (no prose, no code fence). "
        "It must validate against this JSON Schema; every property is required:\n"
        + json.dumps(response_format["json_schema"]["schema"], separators=(",", ":"))
    )
    # "schema" beside json_object is the extension llama-cpp-python (and Anyscale-style servers) enforce as a grammar;
    # a server that refuses the extra field is a server for the next mode.
    params: dict[str, Any] = (
        {"response_format": {"type": "json_object", "schema": response_format["json_schema"]["schema"]}} if mode == "json_object" else {}
    )
    return [*messages, instruction], params


__all__ = ["MODES", "StructuredMode", "endpoint_of", "forget_all", "known_mode", "learn", "refused_format", "request_for"]
