"""One role's model as the protocols see it: streamed text, schema-checked answers, accounting.

Structured answers go through schema-enforced generation (``response_format`` with a JSON
schema, which the embedded llama.cpp server turns into a grammar) and are validated with
pydantic; a malformed answer is retried ``max_retries`` times, then raises
``ModelOutputError`` for the stage to surface as a failed stage.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pydantic_core
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from pydantic import BaseModel, ValidationError

from pipelines.core.errors import BackendUnavailableError, DebateDeskError, ModelOutputError
from pipelines.core.events import ModelCallCompleted
from pipelines.core.text.streamed import StreamedAgain
from pipelines.run.llm import structured_modes
from pipelines.run.llm.limits import Budget

T = TypeVar("T", bound=BaseModel)
log = logging.getLogger(__name__)
CallListener = Callable[[ModelCallCompleted], None]
# Given the chat model whose call lost its connection: a chat model on a server started again, or
# None where the server still runs (then the fault is another, and the call fails as it did).
Reconnect = Callable[[BaseChatModel, Exception], Awaitable[BaseChatModel | None]]


class ResponseCache(Protocol):
    """Where answers to identical calls are kept: a disk cache, or a resumed run's journal."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...

    def delete(self, key: str) -> None: ...


def call_key(model: str, messages: Sequence[BaseMessage], params: dict[str, Any]) -> str:
    """A stable key for a call: (model, prompt, parameters)."""
    payload = json.dumps(
        {"model": model, "messages": [[m.type, str(m.content)] for m in messages], "params": params}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def response_format_for(schema: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` that asks the server to enforce ``schema``, every field required.

    A field with a default is optional in pydantic's schema, and a grammar built from it
    (llama.cpp) lets the model leave the field out, which small models do: Qwen2.5-1.5B
    answered faithfulness verdicts as ``{"statement": 1, "supported": true}`` with no
    evidence id, so no statement could count as supported. The schema sent therefore
    requires every field (as OpenAI's strict mode does); parsing still accepts the defaults.
    Built once per schema (pydantic's schema generation took about a millisecond a call) and
    handed out as a copy, so no caller can change another's.
    """
    return copy.deepcopy(_response_format(schema))


@functools.cache
def _response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": _require_every_field(schema.model_json_schema()), "strict": False},
    }


def _require_every_field(node: Any) -> Any:
    """A copy of a JSON schema where every object lists all its properties as required."""
    if isinstance(node, list):
        return [_require_every_field(item) for item in node]
    if not isinstance(node, dict):
        return node
    copied = {key: _require_every_field(value) for key, value in node.items() if key not in ("properties", "$defs")}
    for mapping in ("properties", "$defs"):  # maps of name -> schema: recurse into each schema, not the map
        if isinstance(node.get(mapping), dict):
            copied[mapping] = {name: _require_every_field(value) for name, value in node[mapping].items()}
    if isinstance(node.get("properties"), dict):
        copied["required"] = list(node["properties"])
    return copied


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the alternatives the model weighed."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Reply:
    """A non-streamed answer; ``tokens`` holds per-token log-probabilities when the backend gave them."""

    text: str
    tokens: tuple[TokenLogprob, ...] = ()

    @property
    def has_logprobs(self) -> bool:
        return bool(self.tokens)


class LLM:
    """A chat model bound to a role, with a concurrency bound and per-call accounting."""

    def __init__(
        self,
        chat: BaseChatModel,
        *,
        role: str,
        model_name: str,
        max_retries: int = 2,
        limiter: AbstractAsyncContextManager[Any] | None = None,
        on_call: CallListener | None = None,
        cache: ResponseCache | None = None,
        params: dict[str, Any] | None = None,
        budget: Budget | None = None,
        reconnect: Reconnect | None = None,
    ) -> None:
        self.chat = chat
        self.role = role
        self.model_name = model_name
        self.max_retries = max_retries
        self._limiter = limiter
        self._on_call = on_call
        self._cache = cache
        self._params = params or {}
        self._budget = budget
        self._reconnect = reconnect
        self._endpoint = structured_modes.endpoint_of(chat, model_name)

    async def stream(self, messages: Sequence[BaseMessage], on_delta: Callable[[str], None], *, max_tokens: int | None = None) -> str:
        """Stream a free-text answer, calling ``on_delta`` per chunk; returns the whole text (at most ``max_tokens`` if given)."""
        limit: dict[str, Any] = {"max_tokens": max_tokens} if max_tokens is not None else {}
        key = call_key(self.model_name, messages, {**self._params, **limit, "mode": "stream"})
        cached = self._cached(key, messages)
        if cached is not None:
            on_delta(cached)
            return cached
        async with self._slot():
            self._spend()
            shown = ""  # what on_delta was given before the connection was lost, if it was
            for attempt in range(2):
                started = time.perf_counter()
                parts: list[str] = []
                usage: dict[str, Any] | None = None
                again = StreamedAgain(shown)
                chat = self.chat
                try:
                    async for chunk in chat.astream(list(messages), None, **limit):
                        text = _chunk_text(chunk)
                        if text:
                            parts.append(text)
                            unseen = again.unseen(text)
                            if unseen:
                                on_delta(unseen)
                        if isinstance(chunk, AIMessageChunk) and chunk.usage_metadata:
                            usage = dict(chunk.usage_metadata)
                except asyncio.CancelledError:
                    self._record(messages, "".join(parts), usage, time.perf_counter() - started, cancelled=True)
                    raise
                except Exception as exc:  # endpoint errors get a message that says how to fix them
                    if attempt == 0 and await self._reconnected(chat, exc):
                        shown = "".join(parts)
                        continue  # asked again of the new server; the part already shown is not shown twice
                    raise _as_backend_error(exc, self.model_name) from exc
                text = "".join(parts)
                self._record(messages, text, usage, time.perf_counter() - started)
                if self._cache is not None:
                    self._cache.put(key, text)
                return text
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def text(self, messages: Sequence[BaseMessage]) -> str:
        """A free-text answer, not streamed."""
        return (await self._invoke(messages))[0]

    async def structured(self, messages: Sequence[BaseMessage], schema: type[T]) -> T:
        """An answer that validates against ``schema``; retried when malformed.

        The output mode is the endpoint's (json_schema, else json_object, else the schema in the
        prompt: see ``structured_modes``), found on the first structured call to the endpoint.
        """
        errors: list[str] = []
        mode = structured_modes.known_mode(self._endpoint)
        for _attempt in range(self.max_retries + 1):
            raw, mode, cut = await self._structured_call(messages, schema, mode)
            try:
                return schema.model_validate_json(_strip_fences(raw))
            except ValidationError as exc:
                if cut and (answer := _cut_answer(raw, schema)) is not None:
                    log.info(
                        "%s: a %s cut off at the token limit inside its last string, kept as far as it got",
                        self.model_name,
                        schema.__name__,
                    )
                    return answer
                sent, params = structured_modes.request_for(messages, schema, mode, response_format_for(schema))
                self._forget(call_key(self.model_name, sent, {**self._params, **params}))
                errors.append(f"{exc.error_count()} error(s): {exc.errors()[0]['msg']} in {raw[:120]!r}")
                if cut and self._params.get("temperature") == 0:
                    # Greedy decoding of the same request runs into the same token limit again: on the
                    # embedded model a retry cost ~10 s for the same cut-off JSON (docs/measurements/2026-11-24-debate-speed.md).
                    errors[-1] += " (cut off at the token limit; at temperature 0 a retry would repeat it)"
                    break
        tries = len(errors)
        raise ModelOutputError(
            f"{self.model_name} gave no valid {schema.__name__} after {tries} tr{'y' if tries == 1 else 'ies'} "
            f"(structured output: {mode}; {'; '.join(errors)})"
        )

    async def _structured_call(
        self, messages: Sequence[BaseMessage], schema: type[BaseModel], known: structured_modes.StructuredMode | None
    ) -> tuple[str, structured_modes.StructuredMode, bool]:
        """One structured call in the endpoint's mode; while it is unknown, the modes in order until one is accepted.

        Also whether the answer was cut off at the token limit (False when that is not known, as for a cached answer).
        """
        for mode in (known,) if known is not None else structured_modes.MODES:
            sent, params = structured_modes.request_for(messages, schema, mode, response_format_for(schema))
            try:
                raw, cut = await self._invoke(sent, structured=mode, **params)
            except BackendUnavailableError as exc:
                if known is not None or mode == structured_modes.MODES[-1] or not structured_modes.refused_format(exc):
                    raise  # a real failure (the plainest request failed too): nothing is learnt
                log.info("%s refused structured output as %s (%s); trying the next mode", self.model_name, mode, exc)
                continue
            if known is None:
                structured_modes.learn(self._endpoint, mode)
            return raw, mode, cut
        raise AssertionError("unreachable: the last mode either answers or raises")

    async def reply(self, messages: Sequence[BaseMessage], **params: Any) -> Reply:
        """A free-text answer with call parameters (``logprobs=True, top_logprobs=k``, ``temperature``, ``seed``, ``max_tokens``).

        Token log-probabilities come back in ``Reply.tokens`` when asked for and the
        backend gives them (OpenAI's ``logprobs.content`` format); otherwise it is empty.
        """
        key = call_key(self.model_name, messages, {**self._params, **params, "mode": "reply"})
        cached = self._cached(key, messages)
        if cached is not None:
            return _reply_from_json(cached)
        message, text = await self._call(messages, **params)
        reply = Reply(text=text, tokens=_token_logprobs(message.response_metadata.get("logprobs")))
        if self._cache is not None:
            self._cache.put(key, _reply_to_json(reply))
        return reply

    async def _invoke(self, messages: Sequence[BaseMessage], *, structured: str | None = None, **kwargs: Any) -> tuple[str, bool]:
        """The answer's text, and whether it stopped at the token limit (finish reason "length"; False from the cache)."""
        key = call_key(self.model_name, messages, {**self._params, **kwargs})
        cached = self._cached(key, messages, structured=structured)
        if cached is not None:
            return cached, False
        message, text = await self._call(messages, structured=structured, **kwargs)
        if self._cache is not None:
            self._cache.put(key, text)
        return text, message.response_metadata.get("finish_reason") == "length"

    async def _call(self, messages: Sequence[BaseMessage], *, structured: str | None = None, **kwargs: Any) -> tuple[AIMessage, str]:
        """One call to the model, within the backend's concurrency bound, recorded (tokens, seconds) as it ends."""
        async with self._slot():
            self._spend()
            for attempt in range(2):
                started = time.perf_counter()
                chat = self.chat
                try:
                    message = await chat.ainvoke(list(messages), **kwargs)
                except asyncio.CancelledError:
                    self._record(messages, "", None, time.perf_counter() - started, structured=structured, cancelled=True)
                    raise
                except Exception as exc:  # endpoint errors get a message that says how to fix them
                    if attempt == 0 and await self._reconnected(chat, exc):
                        continue  # asked again of the new server
                    raise _as_backend_error(exc, self.model_name) from exc
                assert isinstance(message, AIMessage)
                usage = dict(message.usage_metadata) if message.usage_metadata else None
                text = _chunk_text(message)
                self._record(messages, text, usage, time.perf_counter() - started, structured=structured)
                return message, text
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _reconnected(self, failed: BaseChatModel, exc: Exception) -> bool:
        """Whether the server ``failed`` lost was started again (``self.chat`` now talks to it); asked once per call.

        Only a lost connection or a timeout is worth a new server; whether the server really died
        or hung is the ``reconnect`` hook's to tell (it checks that the recorded server still runs,
        and after a timeout that it still answers). Calls
        under way at once may each lose the server; the first to ask gets the new one, the
        others find ``self.chat`` moved on already.
        """
        if self._reconnect is None or not (_lost_connection(exc) or timed_out(exc)):
            return False
        if self.chat is not failed:
            return True  # another call of this role got a new server meanwhile
        chat = await self._reconnect(failed, exc)
        if chat is None or chat is failed:
            return False
        if self.chat is failed:
            mode = structured_modes.known_mode(self._endpoint)
            self.chat = chat
            self._endpoint = structured_modes.endpoint_of(chat, self.model_name)
            if mode is not None and structured_modes.known_mode(self._endpoint) is None:
                structured_modes.learn(self._endpoint, mode)  # the same server program, on a new port
        return True

    def _cached(self, key: str, messages: Sequence[BaseMessage], structured: str | None = None) -> str | None:
        if self._cache is None:
            return None
        text = self._cache.get(key)
        if text is not None and self._on_call is not None:
            self._on_call(
                ModelCallCompleted(
                    role=self.role, model=self.model_name, tokens_in=0, tokens_out=0, seconds=0.0, cached=True, structured=structured
                )
            )
        return text

    def _forget(self, key: str) -> None:
        # A malformed answer must not be served again from the cache on the retry.
        if self._cache is not None:
            self._cache.delete(key)

    def _slot(self) -> AbstractAsyncContextManager[Any]:
        return self._limiter if self._limiter is not None else _NoLimit()

    def _spend(self) -> None:
        # Asked once the call has its slot, just before it goes out: a run over its budget stops here, between calls.
        if self._budget is not None:
            self._budget.start_call()

    def _record(
        self,
        messages: Sequence[BaseMessage],
        text: str,
        usage: dict[str, Any] | None,
        seconds: float,
        structured: str | None = None,
        *,
        cancelled: bool = False,
    ) -> None:
        # A call cancelled on its way (a parallel call hit a spend limit, the run was stopped) reached the endpoint all the
        # same, which read its prompt and may have billed it: it is recorded and charged, with its tokens estimated.
        reused = 0
        if usage:
            tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
            # llama.cpp's server (and OpenAI) say how much of the prompt came from the prompt cache
            reused = min(tokens_in, int((usage.get("input_token_details") or {}).get("cache_read") or 0))
        else:  # some servers send no usage when streaming: estimate at ~4 characters a token
            tokens_in = sum(len(str(m.content)) for m in messages) // 4
            tokens_out = len(text) // 4
        cost = None
        if self._budget is not None:
            self._budget.charge(self.model_name, tokens_in + tokens_out)
            if self._budget.priced:
                cost = round(self._budget.cost_of(self.model_name, tokens_in + tokens_out), 8)
        if self._on_call is None:
            return
        self._on_call(
            ModelCallCompleted(
                role=self.role,
                model=self.model_name,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                tokens_reused=reused,
                seconds=round(seconds, 4),
                structured=structured,
                cancelled=cancelled,
                cost=cost,
            )
        )


class _NoLimit:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


def _chunk_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def _token_logprobs(raw: Any) -> tuple[TokenLogprob, ...]:
    """OpenAI's ``{"content": [{"token", "logprob", "top_logprobs": [...]}, ...]}`` as TokenLogprobs."""
    content = raw.get("content") if isinstance(raw, dict) else None
    if not content:
        return ()
    tokens = []
    for entry in content:
        top = tuple((str(alt.get("token", "")), float(alt.get("logprob", float("-inf")))) for alt in entry.get("top_logprobs") or [])
        tokens.append(TokenLogprob(token=str(entry.get("token", "")), logprob=float(entry.get("logprob", float("-inf"))), top=top))
    return tuple(tokens)


def _reply_to_json(reply: Reply) -> str:
    return json.dumps({"text": reply.text, "tokens": [[t.token, t.logprob, [list(a) for a in t.top]] for t in reply.tokens]})


def _reply_from_json(raw: str) -> Reply:
    data = json.loads(raw)
    tokens = tuple(TokenLogprob(token=t, logprob=lp, top=tuple((a, b) for a, b in top)) for t, lp, top in data.get("tokens", []))
    return Reply(text=data.get("text", ""), tokens=tokens)


CUT = "…"  # ends a string an answer was cut off in


def _cut_answer(raw: str, schema: type[T]) -> T | None:
    """An answer cut off at the token limit inside a string (a judge's reasoning that ran on): the fields before it
    whole and the string as far as it got, ended with "…" (cut inside a key, the key is left out); None when the
    cut fell outside a string or what is left does not validate. The panel's judges on the embedded model wrote
    their scores and vote, then reasoning past the limit, and the whole ruling was lost."""
    text = _strip_fences(raw)
    if not _ends_in_a_string(text):
        return None
    try:
        without = pydantic_core.from_json(text, allow_partial=True)  # the unfinished string left out
        closed = pydantic_core.from_json(text + '"', allow_partial=True)  # closed where it stopped (a key closed so is dropped)
        return schema.model_validate(closed if closed == without else _mark_cut(closed))
    except (ValueError, ValidationError):
        return None


def _ends_in_a_string(text: str) -> bool:
    """Whether JSON text stops inside a string: an odd number of quotes that no backslash escapes."""
    inside = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = inside
        elif char == '"':
            inside = not inside
    return inside


def _mark_cut(value: Any) -> Any:
    """``value`` with its last string (the one the cut fell in) ended with "…"."""
    if isinstance(value, str):
        return value.rstrip() + CUT
    if isinstance(value, dict) and value:
        last = list(value)[-1]
        return {**value, last: _mark_cut(value[last])}
    if isinstance(value, list) and value:
        return [*value[:-1], _mark_cut(value[-1])]
    return value


def _strip_fences(raw: str) -> str:
    # Servers that do not enforce the schema often wrap JSON in a markdown fence.
    text = raw.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text.split("\n", 1)[1] if "\n" in text else text
    return text.strip()


# Errors of a connection that failed or broke, by class name so no client library is imported
# here: openai's (and langchain-openai's subclass of it), httpx's.
_LOST_CONNECTION = frozenset({"APIConnectionError", "ConnectError", "RemoteProtocolError", "ReadError", "WriteError"})


def _lost_connection(exc: Exception) -> bool:
    """Whether a call failed because the connection to its server failed or broke (refused, reset, closed mid-answer)."""
    return isinstance(exc, ConnectionError) or any(cls.__name__ in _LOST_CONNECTION for cls in type(exc).__mro__)


# Timeouts, by class name as above: openai's (a subclass of its connection error), httpx's; a
# streamed answer that stalls raises langchain-openai's StreamChunkTimeoutError, a TimeoutError.
_TIMED_OUT = frozenset({"APITimeoutError", "TimeoutException"})


def timed_out(exc: Exception) -> bool:
    """Whether a call failed because its server gave no answer (or no more of one) in time."""
    return isinstance(exc, TimeoutError) or any(cls.__name__ in _TIMED_OUT for cls in type(exc).__mro__)


def _as_backend_error(exc: Exception, model: str) -> Exception:
    """Endpoint and network failures become BackendUnavailableError; anything else is a bug and propagates."""
    if isinstance(exc, DebateDeskError):
        return exc
    is_endpoint_error = type(exc).__module__.split(".")[0] in {"openai", "langchain_openai", "httpx", "httpcore"} or isinstance(
        exc, (ConnectionError, TimeoutError, asyncio.TimeoutError)
    )
    if not is_endpoint_error:
        return exc
    name = type(exc).__name__
    if _lost_connection(exc) or "Connection" in name or "Timeout" in name:
        return BackendUnavailableError(
            f"cannot reach the endpoint serving {model}: {exc}. Check the base URL and that the server is running."
        )
    if "Authentication" in name or "PermissionDenied" in name:
        return BackendUnavailableError(
            f"the endpoint serving {model} refused the API key: {exc}. Set the key in the sidebar or OPENAI_API_KEY."
        )
    if "NotFound" in name:
        return BackendUnavailableError(f"the endpoint has no model {model!r}: {exc}. Check the model name.")
    return BackendUnavailableError(f"{model} call failed ({name}): {exc}")
