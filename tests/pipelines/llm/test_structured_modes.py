"""Any OpenAI-compatible endpoint: structured output falls back json_schema -> json_object -> schema in the prompt, learnt once."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.events import ModelCallCompleted
from pipelines.run.llm import structured_modes
from pipelines.run.llm.client import LLM
from pipelines.run.llm.openai_backend import build_openai
from tests.fakes import send_json


class Verdict(BaseModel):
    label: str
    reason: str


class Endpoint(BaseHTTPRequestHandler):
    """A chat-completions server that accepts only some response formats, like llama-cpp-python's (500 on json_schema)."""

    accepts: ClassVar[set[str]] = set()
    answers: ClassVar[list[str]] = []
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        kind = (body.get("response_format") or {}).get("type", "none")
        if kind not in self.accepts:
            send_json(self, 500, {"error": {"message": f"response_format.type: input should be 'text' or 'json_object', not {kind!r}"}})
            return
        content = self.answers.pop(0) if self.answers else json.dumps({"label": "SUPPORTS", "reason": "trials agree"})
        send_json(
            self,
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, type[Endpoint]]]:
    handler = type("Handler", (Endpoint,), {"accepts": set(), "answers": [], "seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    structured_modes.forget_all()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler
    httpd.shutdown()
    structured_modes.forget_all()


def llm_for(base_url: str, calls: list[ModelCallCompleted]) -> LLM:
    spec = ModelSpec(backend="openai", model="local", base_url=base_url, api_key="sk-test")  # type: ignore[arg-type]
    chat = build_openai(spec, AppSettings())
    return LLM(chat, role="judge", model_name="local", max_retries=2, on_call=calls.append)


@pytest.mark.parametrize(
    ("accepts", "mode"),
    [({"json_schema", "json_object", "none"}, "json_schema"), ({"json_object", "none"}, "json_object"), ({"none"}, "prompt")],
)
def test_each_endpoint_gets_the_best_mode_it_accepts_and_the_run_says_which(
    endpoint: tuple[str, type[Endpoint]], accepts: set[str], mode: str
) -> None:
    url, handler = endpoint
    handler.accepts = accepts
    calls: list[ModelCallCompleted] = []
    llm = llm_for(url, calls)
    question = [HumanMessage("Do masks reduce transmission?")]
    assert asyncio.run(llm.structured(question, Verdict)) == Verdict(label="SUPPORTS", reason="trials agree")
    assert [c.structured for c in calls] == [mode]
    tried = len(handler.seen)
    kinds = list(dict.fromkeys((body.get("response_format") or {}).get("type", "prompt") for body in handler.seen))
    assert kinds == ["json_schema", "json_object", "prompt"][: ["json_schema", "json_object", "prompt"].index(mode) + 1]
    if mode != "json_schema":
        assert '"label"' in handler.seen[-1]["messages"][-1]["content"], "the schema is in the prompt"
    # Learnt once: the next call (from a new LLM for the same endpoint) goes straight to that mode.
    again: list[ModelCallCompleted] = []
    asyncio.run(llm_for(url, again).structured(question, Verdict))
    assert len(handler.seen) == tried + 1 and [c.structured for c in again] == [mode]


def test_a_malformed_answer_in_the_fallback_mode_is_validated_and_retried(endpoint: tuple[str, type[Endpoint]]) -> None:
    url, handler = endpoint
    handler.accepts = {"none"}
    handler.answers = ["Sure! The label is SUPPORTS.", '{"label": "SUPPORTS"}', json.dumps({"label": "REFUTES", "reason": "no"})]
    calls: list[ModelCallCompleted] = []
    assert asyncio.run(llm_for(url, calls).structured([HumanMessage("q")], Verdict)).label == "REFUTES"
    assert [c.structured for c in calls] == ["prompt", "prompt", "prompt"]


def test_a_server_that_fails_every_request_raises_its_error_and_learns_nothing(endpoint: tuple[str, type[Endpoint]]) -> None:
    url, handler = endpoint
    handler.accepts = set()
    from pipelines.core.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError, match="500|InternalServerError"):
        asyncio.run(llm_for(url, []).structured([HumanMessage("q")], Verdict))
    assert structured_modes.known_mode(("ChatOpenAI", url, "local")) is None
