"""The `fake` backend: a deterministic, instant stand-in for a model, for tests and demos.

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
import math
import random
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

from pipelines.config import AppSettings, ModelSpec
from pipelines.errors import BackendUnavailableError
from pipelines.llm.registry import Backend
from pipelines.stopwords import FUNCTION_WORDS

NEGATIONS = frozenset(
    {"not", "no", "never", "none", "cannot", "can't", "doesn't", "don't", "isn't", "aren't", "won't", "without", "myth", "false", "only"}
)
SUPPORT_AT = 0.5  # share of the claim's content words an evidence item must contain to bear on it

Responder = Callable[["PromptView", dict[str, Any]], dict[str, Any]]
RESPONDERS: dict[str, Responder] = {}


def responder(schema_name: str) -> Callable[[Responder], Responder]:
    """Register how the fake answers a structured request for ``schema_name``."""

    def register(fn: Responder) -> Responder:
        RESPONDERS[schema_name] = fn
        return fn

    return register


ChoiceResponder = Callable[["PromptView", tuple[str, ...]], dict[str, float]]
CHOICE_RESPONDERS: dict[frozenset[str], ChoiceResponder] = {}
TextResponder = Callable[["PromptView"], str]
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


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2 and w not in FUNCTION_WORDS}


def overlap(claim: str, text: str) -> float:
    """Share of the claim's content words found in ``text`` (0..1)."""
    words = content_words(claim)
    return len(words & content_words(text)) / len(words) if words else 0.0


def has_negation(text: str) -> bool:
    return bool(set(re.findall(r"[a-z']+", text.lower())) & NEGATIONS)


@dataclass
class PromptView:
    """What the fake can read out of a prompt."""

    text: str
    claim: str = ""
    evidence: dict[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()

    @classmethod
    def parse(cls, messages: list[BaseMessage]) -> PromptView:
        text = "\n".join(str(m.content) for m in messages)
        claim_match = re.search(r"^Claim:\s*(.+)$", text, flags=re.MULTILINE)
        evidence = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\[(E\d+)\]\s*(.+)$", text, flags=re.MULTILINE)}
        option_lines = re.findall(r"^Options:\s*(.+)$", text, flags=re.MULTILINE)
        options = tuple(o.strip() for o in option_lines[-1].split("|") if o.strip()) if option_lines else ()
        return cls(text=text, claim=claim_match.group(1).strip() if claim_match else "", evidence=evidence, options=options)

    def field(self, name: str) -> str:
        """The value of the last ``Name: value`` line in the prompt ('' if none)."""
        found = re.findall(rf"^{re.escape(name)}:\s*(.+)$", self.text, flags=re.MULTILINE)
        return found[-1].strip() if found else ""

    def best_overlap(self) -> float:
        ranked = self.ranked_evidence()
        return ranked[0][1] if ranked else 0.0

    def ranked_evidence(self) -> list[tuple[str, float]]:
        scored = [(eid, overlap(self.claim, text)) for eid, text in self.evidence.items()]
        return sorted(scored, key=lambda pair: (-pair[1], int(pair[0][1:])))

    def label(self) -> str:
        """SUPPORTS / REFUTES / NOT ENOUGH INFO from the best-overlapping evidence."""
        ranked = self.ranked_evidence()
        if not ranked or ranked[0][1] < SUPPORT_AT:
            return "NOT ENOUGH INFO"
        best = self.evidence[ranked[0][0]]
        return "REFUTES" if has_negation(self.claim) != has_negation(best) else "SUPPORTS"

    def cited(self, n: int = 2) -> list[str]:
        return [eid for eid, score in self.ranked_evidence()[:n] if score > 0]


def argue(view: PromptView) -> str:
    """A short free-text argument ending in a label line, like a debater's answer."""
    label = view.label()
    lines: list[str] = []
    for eid in view.cited():
        sentence = first_sentence(view.evidence[eid])
        lines.append(f"{sentence} [{eid}]")
    if not lines:
        lines.append("The evidence retrieved does not address the claim directly.")
    verb = {"SUPPORTS": "supports", "REFUTES": "contradicts", "NOT ENOUGH INFO": "does not settle"}[label]
    lines.append(f"Taken together, the evidence {verb} the claim that {view.claim.rstrip('.') or 'was made'}.")
    return " ".join(lines) + f"\nLabel: {label}"


def choice_distribution(view: PromptView) -> dict[str, float]:
    """The fake's probabilities over the prompt's options: a registered responder's, else generic."""
    options = view.options
    fn = CHOICE_RESPONDERS.get(frozenset(o.upper() for o in options))
    raw = fn(view, options) if fn is not None else _generic_choice(view, options)
    total = sum(max(0.0, raw.get(o, 0.0)) for o in options) or 1.0
    return {o: max(0.0, raw.get(o, 0.0)) / total for o in options}


def _generic_choice(view: PromptView, options: tuple[str, ...]) -> dict[str, float]:
    # The option naming the fake's own label gets most of the mass; the rest share what is left.
    label = view.label()
    favoured = next((o for o in options if o.upper() == label), options[0])
    rest = (0.4 / (len(options) - 1)) if len(options) > 1 else 0.0
    return {o: 0.6 if o == favoured else rest for o in options}


def option_tokens(option: str) -> list[str]:
    """How a tokenizer might split an option: words and hyphens apart ("HALF-TRUE" -> HALF, -, TRUE)."""
    return re.findall(r"\s?[A-Za-z0-9]+|[^A-Za-z0-9\s]", option)


# Mass the fake puts on a token that is no option at all, as real models do.
OFF_OPTION_MASS = 0.02


def choice_logprobs(distribution: dict[str, float], answer: str) -> dict[str, Any]:
    """OpenAI-style ``logprobs`` for ``answer``: its first token's alternatives carry ``distribution``."""
    first: dict[str, float] = {}
    for option, p in distribution.items():
        token = option_tokens(option)[0]
        first[token] = first.get(token, 0.0) + p * (1 - OFF_OPTION_MASS)
    first["The"] = OFF_OPTION_MASS
    top = sorted(first.items(), key=lambda kv: -kv[1])
    content = []
    for index, token in enumerate(option_tokens(answer)):
        p = first.get(token, 1e-6) if index == 0 else 0.999
        alternatives = top if index == 0 else [(token, p)]
        content.append(
            {
                "token": token,
                "logprob": math.log(max(p, 1e-9)),
                "top_logprobs": [{"token": t, "logprob": math.log(max(q, 1e-9))} for t, q in alternatives],
            }
        )
    return {"content": content}


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) < 300 else sentence[:297] + "..."


def fill_schema(schema: dict[str, Any], view: PromptView, defs: dict[str, Any] | None = None, name: str = "") -> Any:
    """A schema-valid value for any JSON schema, shaped by the prompt where a field name hints how."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return fill_schema(defs[schema["$ref"].split("/")[-1]], view, defs, name)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"] or schema["anyOf"]
        return fill_schema(options[0], view, defs, name)
    if "enum" in schema:
        options = list(schema["enum"])
        label = view.label()
        return label if label in options else options[0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    score = view.ranked_evidence()[0][1] if view.evidence else 0.5
    if kind == "object":
        props = schema.get("properties", {})
        return {key: fill_schema(sub, view, defs, key) for key, sub in props.items()}
    if kind == "array":
        low, high = schema.get("minItems", 1), schema.get("maxItems", 3)
        count = max(low, min(high, 2))
        return [fill_schema(schema.get("items", {}), view, defs, name) for _ in range(count)]
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        value = low + (high - low) * score
        return round(value) if kind == "integer" else round(value, 3)
    if kind == "boolean":
        return score >= SUPPORT_AT
    if "id" in name.lower() and view.cited(1):
        return view.cited(1)[0]
    return first_sentence(next(iter(view.evidence.values()), view.claim or "No content."))


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
    return FakeChatModel()


BACKEND = Backend(
    name="fake",
    build=build_fake,
    description="Not a real model: instant, deterministic answers from word overlap, for tests and demos.",
    is_real_model=False,
    default_model="fake",
    cache_by_default=True,
)


# Register the responders that live beside the protocols' schemas (one place for fakes).
from pipelines.llm import fake_responders as _fake_responders  # noqa: E402,F401
