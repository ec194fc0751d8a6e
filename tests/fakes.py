"""Every fake the tests use, in one place: web search stand-ins and a ready Services."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import Field

from pipelines.calibration.files import Calibration
from pipelines.core.config import AppSettings, ModelSpec, RunConfig
from pipelines.core.errors import BackendUnavailableError, ToolUnavailableError
from pipelines.newsroom.access.users import hash_password
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.llm.registry import Backend
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.web import WebResult

# A desk calibration for the fake judge that settles the demo's clear claims: measured on the demo corpus, fitted for desk's
# default reading (the contrast question, the claim's opposite written), sure of a side when its exhibits agree.
DEMO_MEASURED = [{"corpus": "demo", "what": "the demo corpus (a test's)", "claims": 40, "auc": 0.9}]
SETTLING = Calibration(
    name="sure@1",
    model="fake",
    bias=0.0,
    weights={"net": 6.0, "top": 2.0},
    decide_at=0.55,
    settings={"reader": "contrast", "negation": True, "measured_on": DEMO_MEASURED},
)


def calibrate_fake(monkeypatch: Any, calibration: Calibration | None) -> None:
    """The fake judge model with ``calibration`` as its desk calibration wherever one is looked up (None: never fitted)."""
    from pipelines.run import grounding
    from pipelines.stages import exhibit_reading

    for module in (exhibit_reading, grounding):
        monkeypatch.setattr(module, "load_calibration", lambda model, reader="separate", data_dir=None: calibration)


# Command-line arguments for a quick run: the single-agent baseline, the fake backend, the demo corpus.
SINGLE_ON_FAKE_DEMO = ("--protocol", "single", "--backend", "fake", "--corpus", "demo")


class DeadWeb:
    """Web search as it is offline: every call fails fast."""

    name = "dead"

    def __init__(self) -> None:
        self.calls = 0

    def search(self, query: str, k: int) -> list[WebResult]:
        self.calls += 1
        raise ToolUnavailableError("web search unavailable: no network (test)")


class CannedWeb:
    """Web search that returns the same made-up pages for every query."""

    name = "canned"

    def __init__(self, results: list[WebResult] | None = None) -> None:
        self.calls = 0
        self.results = results or [
            WebResult(
                title="Masks and respiratory viruses",
                url="https://example.org/masks",
                snippet="Randomized trials found masks reduce transmission of respiratory viruses when worn consistently.",
            ),
            WebResult(
                title="A page with markup", url="https://evil.test/markup", snippet="<img src=x onerror=alert(1)> [click](http://evil.test)"
            ),
        ]

    def search(self, query: str, k: int) -> list[WebResult]:
        self.calls += 1
        return self.results[:k]


def fake_config(**updates: object) -> RunConfig:
    """A RunConfig with every role on the fake backend and the demo corpus."""
    config = RunConfig().with_backend("fake")
    return config.model_copy(update={"corpus": "demo", **updates})


def with_settings(config: RunConfig, section: str, **changes: object) -> RunConfig:
    """``config`` with some settings of one section changed: ``retrieval``, ``checker``, or a protocol's own."""
    return config.model_copy(update={section: getattr(config, section).model_copy(update=changes)})


def protocol_config(protocol: str, **settings: object) -> RunConfig:
    """``fake_config`` for ``protocol``, with some of the protocol's own settings changed."""
    return with_settings(fake_config(protocol=protocol), protocol, **settings)


def make_services(
    data_dir: Path,
    embedder: Embedder,
    web: object | None = None,
    chat: FakeChatModel | None = None,
    *,
    cache: bool = False,
    passage_precision: Literal["int8", "float32"] = "int8",
) -> Services:
    """Services for a test; the response cache is off unless asked for, so one test's answers never leak into another's."""
    checkcovid = Path(__file__).resolve().parents[2] / "shared" / "data" / "check-covid"
    settings = AppSettings(data_dir=data_dir, checkcovid_dir=checkcovid, passage_precision=passage_precision)
    services = Services.create(settings, embedder=embedder)
    services.web = web or DeadWeb()  # type: ignore[assignment]
    services.chat_override = chat
    if not cache:
        services.response_cache = None
    return services


class ScriptedFake(FakeChatModel):
    """The fake backend with answers scripted per schema, malformed answers on cue, and a log of every prompt.

    ``answers`` maps a schema name to a dict, or to a function of the prompt text returning a
    dict (or None to fall back to the fake's own answer). ``malformed_when`` makes every
    structured answer to a prompt containing that text broken JSON. ``max_in_flight`` is the
    most calls that were running at once (set ``latency_s`` so calls overlap).
    """

    answers: dict[str, Any] = Field(default_factory=dict)
    malformed_when: str | None = None
    prompts: list[tuple[str, str]] = Field(default_factory=list)  # (schema name or "text", prompt)
    in_flight_at: list[int] = Field(default_factory=list)  # calls running when each prompt was answered
    max_in_flight: int = 0
    in_flight: int = 0

    def reply(self, messages: list[BaseMessage], response_format: dict[str, Any] | None = None) -> str:
        text = "\n".join(str(m.content) for m in messages)
        name = response_format["json_schema"]["name"] if response_format else "text"
        self.prompts.append((name, text))
        self.in_flight_at.append(self.in_flight)
        if response_format is not None and self.malformed_when and self.malformed_when in text:
            return '{"vote": "SUPPORTED", '
        scripted: Callable[[str], dict[str, Any] | None] | dict[str, Any] | None = self.answers.get(name)
        answer = scripted(text) if callable(scripted) else scripted
        if answer is not None:
            return json.dumps(answer)
        return super().reply(messages, response_format)

    def prompts_for(self, schema: str, containing: str = "") -> list[str]:
        return [text for name, text in self.prompts if name == schema and containing in text]

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self._enter()
        try:
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        finally:
            self.in_flight -= 1

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._enter()
        try:
            async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
                yield chunk
                await asyncio.sleep(0)
        finally:
            self.in_flight -= 1

    def _enter(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)


class RecordingChat(FakeChatModel):
    """The fake, remembering each prompt it was sent as (system, user): for tests of what a prompt opens with."""

    sent: list[tuple[str, str]] = Field(default_factory=list)

    def _answer(self, messages, params):  # type: ignore[no-untyped-def]  # every path (plain, streamed, with logprobs) passes here
        system = "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        user = "\n".join(str(m.content) for m in messages if not isinstance(m, SystemMessage))
        self.sent.append((system, user))
        return super()._answer(messages, params)


def send_json(handler: BaseHTTPRequestHandler, status: int, data: object) -> None:
    """A stand-in HTTP server's JSON reply: status, headers and body."""
    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def make_context(services: Services, config: RunConfig, claim: str, reviewer: object | None = None) -> tuple[object, list[object]]:
    """A RunContext on ``services`` with the fake model for every role (or ``services.chat_override``), and the list its events land in."""
    from pipelines.core.domain import Claim
    from pipelines.run.context import RunContext, Toolbox
    from pipelines.run.llm.client import LLM

    events: list[object] = []
    chat = services.chat_override or FakeChatModel()
    llms = {role: LLM(chat, role=role, model_name="fake", on_call=events.append) for role in ("debater", "judge", "scorer")}
    tools = Toolbox(index=services.index, web=services.web_search(config), embedder=services.embedder, memory=services.memory)
    services.ensure_corpus(config.corpus)
    ctx = RunContext(
        run_id="test",
        claim=Claim(text=claim),
        config=config,
        llms=llms,
        tools=tools,
        emit=events.append,
        reviewer=reviewer,  # type: ignore[arg-type]
    )
    return ctx, events


def hand_record(
    claim: str, *events: dict[str, Any], run_id: str = "r1", status: str = "failed", at: float = 1.0, **run: Any
) -> dict[str, Any]:
    """A single-protocol run record as someone might write it by hand: the run's row, its RunStarted, then ``events``."""
    return {
        "format": "debatedesk.run",
        "schema_version": 1,
        "run": {"id": run_id, "claim": claim, "protocol": "single", "status": status, "created_at": at, **run},
        "events": [{"type": "RunStarted", "at": at, "run_id": run_id, "claim": claim, "protocol": "single"}, *events],
    }


# Another organisation's published fact-check, as its ClaimReview JSON-LD reads; the queue tests match typed claims to it.
TEXANS_REVIEW: dict[str, Any] = {
    "@type": "ClaimReview",
    "url": "https://factcheck.example.org/texans",
    "claimReviewed": "Only about 250 Texans have been killed in action since 9/11.",
    "datePublished": "2026-11-30",
    "author": {"name": "Example Checks"},
    "reviewRating": {"alternateName": "Mostly false"},
}


def make_pdf(pages: list[str], *, title: str = "") -> bytes:
    """A small, valid PDF with one line of Helvetica text per page (empty string: a page with no text, as a scan has)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for text in pages:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 11 Tf 40 760 Td ({escaped}) Tj ET" if text else ""
        objects.append(f"<< /Length {len(stream.encode('latin-1'))} >>\nstream\n{stream}\nendstream")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {len(objects)} 0 R >>"
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    if title:
        objects.append(f"<< /Title ({title}) >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    info = f" /Info {len(objects)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def users_file(path: Path) -> Path:
    """A shared desk's users file at ``path``: Ana Ruiz (editor) and Bo Lind (checker), both with password ``pw-for-tests``."""
    hashed = hash_password("pw-for-tests", rounds=4)
    path.write_text(
        f'[users.ana]\nname = "Ana Ruiz"\nrole = "editor"\npassword_hash = "{hashed}"\n'
        f'[users.bo]\nname = "Bo Lind"\nrole = "checker"\npassword_hash = "{hashed}"\n',
        encoding="utf-8",
    )
    return path


class LostConnection(ConnectionError):
    """What a client gets from a model server that has gone away (refused, or closed mid-answer)."""


class APITimeoutError(TimeoutError):
    """What a client gets from a model server that gave no answer in time (named as openai's, which the client knows by name)."""


class LocalServer:
    """A stand-in for the embedded model's local server: it runs, it can die, and it can be started again.

    ``die_at_call``: the server dies as call number N (counted across every model built on it)
    arrives; ``mid_stream``: when N is a streamed call, it dies after the answer's first chunk.
    ``hang_at_call``: the server hangs at call N: it still runs, but that call and every later
    one time out and its health check goes unanswered. ``slow_at_call``: call N times out on a
    server that still answers its health check (it was only slow).
    ``can_start``: False, and a start after the first fails (the model file is gone, say).
    """

    def __init__(
        self,
        die_at_call: int | None = None,
        *,
        mid_stream: bool = False,
        hang_at_call: int | None = None,
        slow_at_call: int | None = None,
        can_start: bool = True,
        slots: int | None = None,
    ) -> None:
        self.slots = slots  # what the backend says it answers at once (None: nothing said)
        self.in_flight = 0
        self.most_at_once = 0
        self.generation = 0
        self.alive = False
        self.starts = 0
        self.calls = 0
        self.die_at_call = die_at_call
        self.mid_stream = mid_stream
        self.hang_at_call = hang_at_call
        self.slow_at_call = slow_at_call
        self.hung = False
        self.health_checks = 0
        self.can_start = can_start

    def ensure(self) -> int:
        """The running server's generation, starting one when none runs (as ``ensure_server`` does)."""
        if not self.alive:
            if self.starts and not self.can_start:
                raise BackendUnavailableError("the model server did not start: model file missing (test)")
            self.generation += 1
            self.alive = True
            self.hung = False
            self.starts += 1
        return self.generation

    def call(self, generation: int, *, streamed: bool = False) -> bool:
        """One call arriving from a client of ``generation``; True when it is to die after the first chunk."""
        if not self.alive or generation != self.generation:
            raise LostConnection("Connection refused (test)")
        if self.hung:
            raise APITimeoutError("Request timed out. (test)")
        self.calls += 1
        if self.calls == self.hang_at_call:
            self.hung = True
            if streamed and self.mid_stream:
                return True
            raise APITimeoutError("Request timed out. (test)")
        if self.calls == self.slow_at_call:
            raise APITimeoutError("Request timed out. (test)")
        if self.calls == self.die_at_call:
            if streamed and self.mid_stream:
                return True
            self.alive = False
            raise LostConnection("Server disconnected without sending a response (test)")
        return False


class ServedChat(FakeChatModel):
    """The fake model behind a ``LocalServer``: it answers while the server it was built on runs."""

    server: Any = None
    generation: int = 0
    openai_api_base: str = ""  # as the embedded model's chat has: each start of the server has its own port

    def _answer(self, messages: list[BaseMessage], params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.server.call(self.generation)
        return super()._answer(messages, params)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.server.in_flight += 1
        self.server.most_at_once = max(self.server.most_at_once, self.server.in_flight)
        try:
            await asyncio.sleep(0.002)  # a call takes a moment: calls sent together overlap at the server
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        finally:
            self.server.in_flight -= 1

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        dies = self.server.call(self.generation, streamed=True)
        text, _ = super()._answer(messages, kwargs)
        for i, piece in enumerate(self._chunks(text)):
            if dies and i == 1:
                if self.server.hung:  # no more of the answer comes: langchain-openai's chunk timeout, a TimeoutError
                    raise TimeoutError("no chunk within the stream chunk timeout (test)")
                self.server.alive = False
                raise LostConnection("peer closed connection without sending complete message body (test)")
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
            await asyncio.sleep(0)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=self._usage(messages, text)))


def local_server_backend(server: LocalServer, name: str = "local-fake") -> Backend:
    """A backend like the embedded one, on ``server``: built models start it, and a model on a dead server no longer serves."""

    def build(spec: ModelSpec, settings: AppSettings) -> ServedChat:
        generation = server.ensure()
        return ServedChat(server=server, generation=generation, openai_api_base=f"http://127.0.0.1:{8600 + generation}/v1")

    def still_serves(chat: BaseChatModel, settings: AppSettings) -> bool:
        return server.alive and getattr(chat, "generation", None) == server.generation

    def stop_if_unresponsive(chat: BaseChatModel, settings: AppSettings) -> str | None:
        if not still_serves(chat, settings):
            return None
        server.health_checks += 1
        if not server.hung:
            return None
        server.alive = False
        return "hung: no answer to its health check (test), so it was stopped"

    return Backend(
        name=name,
        build=build,
        description="a fake local server (tests)",
        is_real_model=False,
        still_serves=still_serves,
        answers_at_once=lambda chat, settings: server.slots,
        stop_if_unresponsive=stop_if_unresponsive,
    )
