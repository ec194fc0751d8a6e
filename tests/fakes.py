"""Every fake the tests use, in one place: web search stand-ins and a ready Services."""

from __future__ import annotations

from pathlib import Path

from pipelines.config import AppSettings, RunConfig
from pipelines.errors import ToolUnavailableError
from pipelines.llm.fake import FakeChatModel
from pipelines.runner import Services
from pipelines.tools.embeddings import Embedder
from pipelines.tools.web import WebResult


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
                title="A page with markup", url="javascript:alert(1)", snippet="<img src=x onerror=alert(1)> [click](http://evil.test)"
            ),
        ]

    def search(self, query: str, k: int) -> list[WebResult]:
        self.calls += 1
        return self.results[:k]


def fake_config(**updates: object) -> RunConfig:
    """A RunConfig with every role on the fake backend and the demo corpus."""
    config = RunConfig().with_backend("fake")
    return config.model_copy(update={"corpus": "demo", **updates})


def make_services(
    data_dir: Path, embedder: Embedder, web: object | None = None, chat: FakeChatModel | None = None, *, cache: bool = False
) -> Services:
    """Services for a test; the response cache is off unless asked for, so one test's answers never leak into another's."""
    settings = AppSettings(data_dir=data_dir, checkcovid_dir=Path(__file__).resolve().parents[2] / "shared" / "data" / "check-covid")
    services = Services.create(settings, embedder=embedder)
    services.web = web or DeadWeb()  # type: ignore[assignment]
    services.chat_override = chat
    if not cache:
        services.response_cache = None
    return services
