import pytest

from pipelines.core.errors import ToolUnavailableError
from pipelines.run.tools.web import DdgsSearch, is_web_url


def test_dead_search_engine_becomes_tool_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    from ddgs import DDGS
    from ddgs.exceptions import DDGSException

    def refuse(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise DDGSException("No results found.")

    monkeypatch.setattr(DDGS, "text", refuse)
    with pytest.raises(ToolUnavailableError, match="web search unavailable"):
        DdgsSearch().search("masks", 3)


def test_results_keep_only_web_links(monkeypatch: pytest.MonkeyPatch) -> None:
    from ddgs import DDGS

    rows = [{"title": "ok", "href": "https://a.org/x", "body": "b"}, {"title": "bad", "href": "javascript:alert(1)", "body": "b"}]
    monkeypatch.setattr(DDGS, "text", lambda self, *a, **k: rows)
    assert [r.url for r in DdgsSearch().search("q", 5)] == ["https://a.org/x"]


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://x.org", True),
        ("http://x.org/a?b", True),
        ("javascript:alert(1)", False),
        ("data:text/html,x", False),
        ("file:///etc/passwd", False),
        ("https://", False),
    ],
)
def test_is_web_url(url: str, ok: bool) -> None:
    assert is_web_url(url) is ok


DNS = (
    "DNSError: DNSError('error sending request for url (https://search.yahoo.com/search;_ylt=abc?p=masks) > error resolving "
    'DNS > DNS error: no records found for Query { name: Name("search.yahoo.com."), query_type: A, query_class: IN }\')'
)


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        ("dns", "web search unavailable: no network: the search engines could not be reached"),
        ("timeout", "web search unavailable: the search engines did not answer within 8 s"),
        ("ratelimit", "web search unavailable: the search engines are refusing searches for now (too many); try again in a few minutes"),
        ("oserror", "web search unavailable: no network: the search engines could not be reached"),
        ("nothing", "web search unavailable: the search engines found nothing for this query"),
        ("other", "web search unavailable: the search engines failed (engine said teapot: see)"),
    ],
)
def test_why_the_web_failed_is_said_plainly(monkeypatch: pytest.MonkeyPatch, raised: str, said: str) -> None:
    # ddgs's own messages quote each engine's whole request URL and the resolver's internals; the stage log showed them.
    from ddgs import DDGS
    from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

    errors = {
        "dns": DDGSException(DNS),
        "timeout": TimeoutException("https://html.duckduckgo.com/html 408"),
        "ratelimit": RatelimitException("https://lite.duckduckgo.com/lite/ 202 Ratelimit"),
        "oserror": OSError(101, "Network is unreachable"),
        "nothing": DDGSException("No results found."),
        "other": DDGSException("engine said teapot: see (https://a.example/x?q=masks)"),
    }

    def fail(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise errors[raised]

    monkeypatch.setattr(DDGS, "text", fail)
    with pytest.raises(ToolUnavailableError) as caught:
        DdgsSearch(timeout_s=8).search("masks", 3)
    assert str(caught.value) == said and "http" not in str(caught.value)
