"""Web search through ddgs; offline or rate-limited it raises ToolUnavailableError, never hangs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

from pipelines.core.config import RetrievalConfig
from pipelines.core.errors import WEB_UNAVAILABLE, ToolUnavailableError
from pipelines.run.tools.source_policy import SourcePolicy


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
        except (DDGSException, OSError) as exc:  # OSError: no network at all
            raise ToolUnavailableError(WEB_UNAVAILABLE + plain_reason(exc, self._timeout)) from exc
        results = []
        for row in rows[:k]:
            url = str(row.get("href") or row.get("url") or "")
            if not is_web_url(url):
                continue
            results.append(WebResult(title=str(row.get("title", "")), url=url, snippet=str(row.get("body", ""))))
        return results


_NO_NETWORK = ("dns", "resolv", "connect", "network is unreachable", "no route to host")


def plain_reason(exc: BaseException, timeout_s: int) -> str:
    """Why the search engines gave nothing, in a checker's words: ddgs's own messages quote the engine's whole request URL
    and the resolver's internals ("DNSError('error sending request for url (https://...) > error resolving DNS > ...')")."""
    from ddgs.exceptions import RatelimitException, TimeoutException

    text = " ".join(str(exc).split())
    lowered = text.lower()
    if isinstance(exc, TimeoutException) or "timed out" in lowered or "timeout" in lowered:
        return f"the search engines did not answer within {timeout_s} s"
    if isinstance(exc, RatelimitException) or "ratelimit" in lowered or "429" in text:
        return "the search engines are refusing searches for now (too many); try again in a few minutes"
    if isinstance(exc, OSError) or any(word in lowered for word in _NO_NETWORK):
        return "no network: the search engines could not be reached"
    if "no results" in lowered:
        return "the search engines found nothing for this query"
    bare = re.sub(r"\(?https?://\S+\)?", "", text).strip()  # an engine's request URL says nothing to a checker
    return f"the search engines failed ({bare[:120] or type(exc).__name__})"


class OfflineSearch:
    """What the app uses when web search is switched off: always says so."""

    name = "off"

    def search(self, query: str, k: int) -> list[WebResult]:
        raise ToolUnavailableError("web search is switched off for this run")


def source_policy(config: RetrievalConfig) -> SourcePolicy:
    """The run's web source policy: its preset plus the run's own allow and deny lists."""
    return SourcePolicy.build(config.source_policy, config.allow_domains, config.deny_domains)


class PolicyFilteredSearch:
    """A web search whose results pass a source policy first: a refused result never leaves it.

    With a restrictive policy it asks the engine for more results than wanted, so filtering
    still leaves ``k`` when it can.
    """

    def __init__(self, inner: WebSearch, policy: SourcePolicy) -> None:
        self.inner = inner
        self.policy = policy
        self.name = inner.name

    def search(self, query: str, k: int) -> list[WebResult]:
        return self.search_reporting(query, k)[0]

    def search_reporting(self, query: str, k: int) -> tuple[list[WebResult], list[str]]:
        """The allowed results (at most ``k``) and, for each refused one, why."""
        fetch = min(max(3 * k, k + 5), 30) if self.policy.restricts else k
        kept: list[WebResult] = []
        refused: list[str] = []
        for result in self.inner.search(query, fetch):
            reason = self.policy.verdict(result.url)
            if reason:
                refused.append(reason)
            elif len(kept) < k:
                kept.append(result)
        return kept, refused


def filtered(web: WebSearch, policy: SourcePolicy) -> PolicyFilteredSearch:
    """``web`` behind ``policy`` (unwrapped first, so a policy is never applied twice)."""
    inner = web.inner if isinstance(web, PolicyFilteredSearch) else web
    return PolicyFilteredSearch(inner, policy)
