"""The embedded backend's chat model: ChatOpenAI adapted to llama-cpp-python's server, and its registration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import BackendUnavailableError
from pipelines.run.llm.embedded import model_files, server
from pipelines.run.llm.embedded.model_files import MODEL_FILE
from pipelines.run.llm.openai_backend import chat_model_for_endpoint
from pipelines.run.llm.registry import Backend


class LlamaCppChatOpenAI(ChatOpenAI):
    """ChatOpenAI adapted to llama-cpp-python's server (and llama.cpp's own, which takes the same requests).

    - A ``response_format`` of OpenAI's ``json_schema`` type (or a pydantic class) is
      rewritten to ``{"type": "json_object", "schema": ...}``, the only form the Python
      server enforces with a grammar (it refuses ``json_schema`` with an HTTP 500); the
      native llama-server enforces both forms.
    - It travels in ``extra_body`` rather than as ``response_format``: langchain-openai
      1.7 sends any request with ``response_format`` through ``chat.completions.parse``
      (and ``astream`` through ``beta.chat.completions.stream``), which raises
      ``LengthFinishReasonError`` on a truncated answer instead of returning it. Out of
      that path, structured calls stream like any other and ``message.content`` holds
      the JSON text; ``additional_kwargs["parsed"]`` is never filled, so callers parse
      ``content`` with pydantic (and ``with_structured_output(method="json_schema")``
      is not supported; ``method="json_mode"`` is).
    - ``max_completion_tokens`` (what ChatOpenAI sends for ``max_tokens``) is unknown to
      the server, which would then generate until the context is full; it goes back to
      ``max_tokens``.
    - ``logprobs``/``top_logprobs`` are dropped unless ``token_probabilities`` is set (the
      server was started with ``logits_all``): a server without it answers them with an
      HTTP 500, and callers fall back to sampling when no probabilities come back.
    - To llama.cpp's own server (``grammar_from_schema``), the schema goes as the grammar
      llama-cpp-python itself builds from it (``llama_cpp_grammar``): llama-server's own
      converter allows other whitespace, and the answers then differ from the Python
      server's; with the same grammar they are the same, token for token, at temperature 0.
    """

    token_probabilities: bool = False
    grammar_from_schema: bool = False

    def _get_request_payload(self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if not self.token_probabilities:
            payload.pop("logprobs", None)
            payload.pop("top_logprobs", None)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        if (response_format := payload.pop("response_format", None)) is not None:
            translated = llama_cpp_response_format(response_format)
            if translated is not None:
                extra = {"grammar": llama_cpp_grammar(translated)} if self.grammar_from_schema else {"response_format": translated}
                payload["extra_body"] = {**(payload.get("extra_body") or {}), **extra}
        return payload


def llama_cpp_grammar(response_format: dict[str, Any]) -> str:
    """The GBNF grammar llama-cpp-python's server enforces for a ``json_object`` response format (its own converter and fallback)."""
    from llama_cpp import llama_grammar

    schema = response_format.get("schema")
    if schema is None:
        return llama_grammar.JSON_GBNF
    try:
        return llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    except Exception:  # what the Python server does when its converter cannot handle a schema: any JSON
        return llama_grammar.JSON_GBNF


def llama_cpp_response_format(response_format: Any) -> dict[str, Any] | None:
    """An OpenAI ``response_format`` in the form llama-cpp-python's server enforces."""
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return {"type": "json_object", "schema": response_format.model_json_schema()}
    if not isinstance(response_format, dict):
        raise TypeError(f"response_format must be a dict or a pydantic model class, not {type(response_format).__name__}")
    kind = response_format.get("type")
    if kind == "json_schema":
        return {"type": "json_object", "schema": response_format["json_schema"]["schema"]}
    if kind == "json_object":
        return response_format
    if kind == "text":
        return None
    raise ValueError(f"unsupported response_format type {kind!r}; use json_schema, json_object or text")


def build_embedded(spec: ModelSpec, settings: AppSettings) -> BaseChatModel:
    """A chat model on the local llama.cpp server, starting the server if needed."""
    model_path = _model_path(spec, settings)
    # spec.logprobs opts in to a server with logits_all (memory cost: see ensure_server).
    base_url = server.ensure_server(
        model_path,
        settings.model_cache,
        logprobs=spec.logprobs,
        n_threads=settings.llama_threads or None,
        n_slots=settings.llama_slots or None,
        binary=settings.llama_server,
        cache_ram_mib=settings.llama_cache_ram,
    )
    state = server.read_state(settings.model_cache)
    key = server.client_key(state, base_url)
    chat = chat_model_for_endpoint(spec, base_url=base_url, api_key=key, model=model_path.stem, chat_class=LlamaCppChatOpenAI)
    assert isinstance(chat, LlamaCppChatOpenAI)
    chat.token_probabilities = spec.logprobs
    chat.grammar_from_schema = state is not None and state.base_url == base_url and state.kind == "native"
    return chat


def still_serves(chat: BaseChatModel, settings: AppSettings) -> bool:
    """Whether ``chat`` talks to the recorded server and that server still runs.

    A server that crashed, was stopped (``pipelines model stop``) or was replaced by another
    start answers no more; the app then builds the model again, which starts a server, instead
    of failing every later run with "cannot reach the endpoint".
    """
    state = server.read_state(settings.model_cache)
    return state is not None and getattr(chat, "openai_api_base", None) == state.base_url and server.is_live(state)


def stop_if_unresponsive(chat: BaseChatModel, settings: AppSettings) -> str | None:
    """Stop the server ``chat`` talks to if it runs but no longer answers; why, for the record, or None.

    Asked after a call to it timed out. A server that answers its health check is only slow (the
    call fails as before); one that does not is killed, and the run starts another. Only the
    native server can tell: the Python one answers nothing while it generates.
    """
    state = server.read_state(settings.model_cache)
    if state is None or state.kind != "native" or getattr(chat, "openai_api_base", None) != state.base_url:
        return None
    if not server.stop_unresponsive(settings.model_cache, state):
        return None
    return f"hung: no answer to its health check in {server.HEALTH_TIMEOUT_S:g} s, so it was stopped"


def answers_at_once(chat: BaseChatModel, settings: AppSettings) -> int | None:
    """The slots of the server ``chat`` talks to (one on 2 threads: calls are answered one at a time); None if it is not the recorded one."""
    state = server.read_state(settings.model_cache)
    return state.slots if state is not None and getattr(chat, "openai_api_base", None) == state.base_url else None


def _model_path(spec: ModelSpec, settings: AppSettings) -> Path:
    if not spec.model or spec.model == MODEL_FILE:
        return model_files.assemble_model(settings.model_cache)
    path = Path(spec.model).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return path
    raise BackendUnavailableError(
        f"the embedded backend runs a local .gguf file, and {spec.model!r} is not one; "
        f"leave the model empty for the bundled {MODEL_FILE}, or give the path of a .gguf file"
    )


BACKEND = Backend(
    name="embedded",
    build=build_embedded,
    description="Qwen2.5-Coder-1.5B on a local llama.cpp server: private and offline, but a weak judge.",
    is_real_model=True,
    default_model=MODEL_FILE,
    cache_by_default=True,
    still_serves=still_serves,
    answers_at_once=answers_at_once,
    stop_if_unresponsive=stop_if_unresponsive,
)
