"""Web search through ddgs; offline or rate-limited it raises ToolUnavailableError, never hangs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

from pipelines.errors import ToolUnavailableError


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    snippet: str


class WebSearch(Protocol):
    name: str

    def search(self, query: str, k: int) -> list[WebResult]: ...


def is_web_url(url: str) -> bool:
    """Only http(s) links are shown as links: no javascript:, data: or file: URLs."""
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


class DdgsSearch:
    """DuckDuckGo and friends via the ddgs metasearch library."""

    name = "ddgs"

    def __init__(self, timeout_s: float = 8.0) -> None:
        self._timeout = max(1, int(timeout_s))

    def search(self, query: str, k: int) -> list[WebResult]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException

        try:
            rows = DDGS(timeout=self._timeout).text(query, max_results=k) or []
        except DDGSException as exc:
            raise ToolUnavailableError(f"web search unavailable: {exc}") from exc
        except OSError as exc:  # no network at all
            raise ToolUnavailableError(f"web search unavailable: {exc}") from exc
        results = []
        for row in rows[:k]:
            url = str(row.get("href") or row.get("url") or "")
            if not is_web_url(url):
                continue
            results.append(WebResult(title=str(row.get("title", "")), url=url, snippet=str(row.get("body", ""))))
        return results


class OfflineSearch:
    """What the app uses when web search is switched off: always says so."""

    name = "off"

    def search(self, query: str, k: int) -> list[WebResult]:
        raise ToolUnavailableError("web search is switched off for this run")
