"""The stage log quotes a long stage detail cut at a word with "…", never silently mid-word (the record keeps it whole)."""

from __future__ import annotations

from components.transcript import LOG_CHARS, RunView, log_cut
from pipelines.core.events import StageCompleted, WebSearchUnavailable


def test_a_long_detail_is_cut_at_a_word_and_says_so() -> None:
    titles = "; ".join(f"E{i} “A passage on another subject number {i}” (0.0{i % 10})" for i in range(5, 26))
    detail = f"5 exhibits; 20 more found were set aside unread, further from the claim in meaning than 0.15: {titles}"
    view = RunView(live=False, key="log")
    view.feed(StageCompleted(stage="exhibits", detail=detail))
    line = view.stage_log[-1]
    assert line.endswith(" …") and len(line) < LOG_CHARS + 40
    quoted = line.split("done: ", 1)[1].removesuffix(" …").replace("\\", "")
    assert detail.startswith(quoted) and detail[len(quoted)] == " "  # whole words only


def test_short_text_is_kept_and_one_long_word_is_cut_too() -> None:
    assert log_cut("Masks reduce  transmission") == "Masks reduce transmission"
    url = "https://example.org/" + "a" * 500
    assert log_cut(url) == url[: LOG_CHARS - 1] + "…"
    assert log_cut("   ") == ""


def test_the_web_failing_is_said_once_and_plainly() -> None:
    view = RunView(live=False, key="web")
    reason = "web search unavailable: no network: the search engines could not be reached"
    view.feed(WebSearchUnavailable(reason=reason, fallback="corpus search", agent="Clerk", round=1))
    line = view.stage_log[-1].replace("\\", "")
    assert line == "🌐 Web search unavailable (no network: the search engines could not be reached) — using corpus search instead."


def test_the_running_stage_s_label_is_cut_at_a_word_and_escaped() -> None:
    """The label over a live run read "stances: asking of each of 18 exhibits whether ... in 2 option or": cut at 100
    characters mid-word; and a model's words in a stage's detail reached it as Markdown."""
    from types import SimpleNamespace

    from components.live_run import _stage_label
    from components.transcript import STATUS_CHARS
    from pipelines.core.events import StageStarted
    from pipelines.core.text.safety import escape_markdown

    def label(detail: str) -> str:
        return _stage_label(SimpleNamespace(events=[StageStarted(stage="stances", detail=detail)]))  # type: ignore[arg-type]

    long = label("asking of each of 18 exhibits whether it supports the claim or its opposite, in 2 option orders, then more words")
    shown = long.replace("\\", "")
    assert shown.endswith(" …") and len(shown) <= STATUS_CHARS
    assert shown.startswith("stances: asking of each of 18 exhibits") and not shown.removesuffix(" …").endswith(" or")
    assert label("**bold** [x](http://e.test)") == escape_markdown("stances: **bold** [x](http://e.test)")
