"""Exports pasted into a web page, as a newsroom publishes them, run no script in Chromium."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from pipelines.core.events import VerdictOverridden
from pipelines.record.export import export_run
from tests.pipelines.record.test_export_safety import SCRIPT, hostile_run

pytestmark = pytest.mark.e2e


def test_exports_embedded_in_a_page_run_no_injected_script(browser) -> None:  # type: ignore[no-untyped-def]
    summary, events = hostile_run()
    ruled = [e for e in events if not isinstance(e, VerdictOverridden)]  # the override's label is no verdict a ClaimReview rates
    claimreview = export_run(summary, ruled, "claimreview")
    record = export_run(summary, events, "json")
    # Markdown rendered with raw HTML allowed: the report's own escaping must hold even then.
    report = MarkdownIt("commonmark", {"html": True}).render(export_run(summary, events, "md"))
    html = f"""<!doctype html><html><head>
<script type="application/ld+json">{claimreview}</script>
<script type="application/json" id="record">{record}</script>
</head><body><article id="report">{report}</article>
<script>
  window.parsedReview = JSON.parse(document.querySelector('script[type="application/ld+json"]').textContent);
  window.parsedRecord = JSON.parse(document.getElementById("record").textContent);
</script></body></html>"""
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.set_content(html, wait_until="load")
        page.wait_for_timeout(300)
        assert dialogs == [], f"an export ran a script: {dialogs}"
        # The blocks stayed whole: the browser reads back exactly what was exported.
        assert page.evaluate("window.parsedReview") == json.loads(claimreview)
        assert page.evaluate("window.parsedRecord") == json.loads(record)
        assert page.locator("#report img").count() == 0 and page.locator("#report script").count() == 0
        assert not [u for u in requests if "evil.example" in u], "the report loaded an image from a hostile URL"
        assert SCRIPT in page.locator("#report").inner_text()  # shown as text
    finally:
        context.close()
