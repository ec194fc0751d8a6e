"""The fake chat model: deterministic, instant answers for tests and demos, and its registration.

It is not a language model and the UI says so. It reads the claim and the evidence out of
the prompt (the ``Claim:`` line and ``[E1] ...`` evidence lines every prompt uses) and
answers by word overlap: enough overlap means the evidence bears on the claim; a negation
on one side but not the other means it refutes it. Structured requests are answered by a
responder registered for the schema's name, else by filling the JSON schema generically.

Two more prompt conventions: a prompt with an ``Options: A | B | C`` line asks for one of
those answers; the fake picks one from a distribution (a choice responder registered for
that option set, else a generic one), draws it at random when called with a temperature
above 0 (seeded by ``seed``, so sampling is repeatable), and returns the distribution as
OpenAI-style ``logprobs`` when asked (``logprobs=True``) unless built with
``logprobs=False``, which is how the no-probabilities path is tested. A free-text prompt
containing a marker registered with ``text_responder`` is answered by that responder.

Knobs for tests: ``latency_s`` (sleep per call), ``fail_after`` (raise after N calls, to
simulate a crash), ``fail_when`` (raise when the prompt contains a text), ``script``
(replies served in order before the heuristics), ``malformed`` (the first N structured
replies are broken JSON).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import BackendUnavailableError
from pipelines.protocols.base import load_fake_responders
from pipelines.run.llm.fake.generic import argue, choice_distribution, choice_logprobs, fill_schema
from pipelines.run.llm.fake.prompt import PromptView
from pipelines.run.llm.fake.responders import RESPONDERS, TEXT_RESPONDERS
from pipelines.run.llm.registry import Backend


class FakeChatModel(BaseChatModel):
    """Deterministic answers from word overlap; never a real model."""

    latency_s: float = 0.0
    fail_after: int | None = None
    fail_when: str | None = None
    script: list[str] = Field(default_factory=list)
    malformed: int = 0
    words_per_chunk: int = 3
    logprobs: bool = True

    _calls: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "debatedesk-fake"

    @property
    def calls(self) -> int:
        return self._calls

    def reply(self, messages: list[BaseMessage], response_format: dict[str, Any] | None = None) -> str:
        """The reply to one call: scripted, or derived from the prompt."""
        return self._respond(messages, {"response_format": response_format} if response_format else {})[0]

    def _answer(self, messages: list[BaseMessage], params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Calls asking for token probabilities or sampling need the metadata; the rest go through ``reply``,
        which tests override or spy on."""
        if params.get("logprobs") or float(params.get("temperature") or 0.0) > 0:
            return self._respond(messages, params)
        return self.reply(messages, params.get("response_format")), {}

    def _respond(self, messages: list[BaseMessage], params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The reply text and its response metadata (``logprobs`` for an options prompt when asked)."""
        response_format = params.get("response_format")
        with self._lock:
            self._calls += 1
            number = self._calls
            scripted = self.script.pop(0) if self.script else None
            broken = response_format is not None and self.malformed > 0
            if broken:
                self.malformed -= 1
        load_fake_responders()  # each protocol's own, registered on first use (its folder's fake.py)
        view = PromptView.parse(messages)
        if self.fail_after is not None and number > self.fail_after:
            raise BackendUnavailableError(f"fake backend stopped after {self.fail_after} calls (a simulated crash)")
        if self.fail_when and self.fail_when in view.text:
            raise BackendUnavailableError(f"fake backend told to fail on {self.fail_when!r}")
        if scripted is not None:
            return scripted, {}
        if broken:
            return '{"this is": not json', {}
        if response_format is None:
            if view.options:
                return self._choose(view, params, number)
            marker = next((m for m in TEXT_RESPONDERS if m in view.text), None)
            return (TEXT_RESPONDERS[marker](view) if marker else argue(view)), {}
        spec = response_format.get("json_schema", {})
        schema = spec.get("schema", {})
        answer = RESPONDERS[spec["name"]](view, schema) if spec.get("name") in RESPONDERS else fill_schema(schema, view)
        return json.dumps(answer), {}

    def _choose(self, view: PromptView, params: dict[str, Any], number: int) -> tuple[str, dict[str, Any]]:
        distribution = choice_distribution(view)
        if float(params.get("temperature") or 0.0) > 0:
            # Sampling: a draw from the distribution, repeatable for a given prompt and seed.
            seed = params.get("seed", number)
            digest = hashlib.sha256(f"{view.text}|{seed}".encode()).hexdigest()
            rng = random.Random(int(digest[:16], 16))
            answer = rng.choices(list(distribution), weights=list(distribution.values()))[0]
        else:
            answer = max(distribution, key=lambda o: distribution[o])
        metadata = {"logprobs": choice_logprobs(distribution, answer)} if params.get("logprobs") and self.logprobs else {}
        return answer, metadata

    def _usage(self, messages: list[BaseMessage], text: str) -> UsageMetadata:
        # Token counts that look like a real tokenizer's (~1.3 tokens a word), for cost benchmarks.
        tokens_in = int(sum(len(str(m.content).split()) for m in messages) * 1.3)
        tokens_out = int(len(text.split()) * 1.3)
        return UsageMetadata(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        text, metadata = self._answer(messages, kwargs)
        message = AIMessage(content=text, usage_metadata=self._usage(messages, text), response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text, metadata = self._answer(messages, kwargs)
        message = AIMessage(content=text, usage_metadata=self._usage(messages, text), response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(self, text: str) -> Iterator[str]:
        words = re.split(r"(\s+)", text)
        step = self.words_per_chunk * 2
        for i in range(0, len(words), step):
            yield "".join(words[i : i + step])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.latency_s:
            time.sleep(self.latency_s)
        text, _ = self._answer(messages, kwargs)
        for piece in self._chunks(text):
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=self._usage(messages, text)))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text, _ = self._answer(messages, kwargs)
        for piece in self._chunks(text):
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
            await asyncio.sleep(0)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=self._usage(messages, text)))


def build_fake(spec: ModelSpec, settings: AppSettings) -> BaseChatModel:
    return FakeChatModel(latency_s=settings.fake_latency_s)


BACKEND = Backend(
    name="fake",
    build=build_fake,
    description="Not a real model: instant, deterministic answers from word overlap, for tests and demos.",
    is_real_model=False,
    default_model="fake",
    cache_by_default=True,
)
