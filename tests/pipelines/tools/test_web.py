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
