"""Exports stay inert where they are published: JSON-LD in a <script> block, JSON beside it, Markdown rendered to HTML."""

from __future__ import annotations

import json
from typing import Any

from pipelines.events import Event
from pipelines.record.export import export_run, load_record, to_claimreview
from pipelines.record.store import RunSummary
from tests.fakes import hand_record

SCRIPT = "</script><script>alert(document.domain)</script>"
HOSTILE_URLS = [
    "javascript:alert(1)",
    "data:text/html,<script>alert(2)</script>",
    "http://127.0.0.1:8080/admin",
    "http://10.0.0.5/intranet",
    "http://[::1]/x",
    "http://localhost/x",
    "https://user:pw@example.org/x",
    "https://example.org/a b",
    "vbscript:msgbox(1)",
]
PUBLIC_URL = "https://www.example.org/masks?study=1&x=2"


def hostile_record() -> dict[str, Any]:
    """A hand-written record (as an import could bring) whose every free-text field tries to break out of its sink."""
    evidence = [
        {
            "id": f"E{i}",
            "source": "web",
            "title": f"{SCRIPT} title {i}",
            "text": f"<img src=x onerror=alert({i})> \u2028 {SCRIPT}",
            "url": url,
        }
        for i, url in enumerate([*HOSTILE_URLS, PUBLIC_URL], start=1)
    ]
    cited = [e["id"] for e in evidence]
    claim = f"Masks work {SCRIPT} <!-- \u2028 &lt;"
    return hand_record(
        claim,
        *[{"type": "EvidenceRetrieved", "at": 1700000001, "agent": "A", "round": 1, "evidence": e} for e in evidence],
        {
            "type": "VerdictReached",
            "at": 1700000002,
            "verdict": {"label": "SUPPORTS", "rationale": f"because {SCRIPT}", "cited": cited},
        },
        {
            "type": "VerdictOverridden",
            "at": 1700000003,
            "label": f"FALSE{SCRIPT}",
            "note": f"note {SCRIPT} [x](javascript:alert(5)) ![i](http://evil.example/p.png)",
            "by": f"Ana{SCRIPT}",
        },
        run_id="hostile-1",
        status="completed",
        at=1700000000,
        verdict="SUPPORTS",
        checker_verdict=f"FALSE{SCRIPT}",
        checker_note=f"note {SCRIPT} [x](javascript:alert(5)) ![i](http://evil.example/p.png)",
        checker_by=f"Ana{SCRIPT}",
    )


def hostile_run() -> tuple[RunSummary, list[Event]]:
    return load_record(json.dumps(hostile_record()))


def test_claimreview_cites_only_public_http_urls() -> None:
    summary, events = hostile_run()
    doc = to_claimreview(summary, events)
    assert [c["url"] for c in doc["citation"]] == [PUBLIC_URL]


def test_json_exports_cannot_close_a_script_block_and_parse_to_the_same_record() -> None:
    summary, events = hostile_run()
    for fmt in ("json", "claimreview"):
        text = export_run(summary, events, fmt)
        assert "<" not in text and ">" not in text and "\u2028" not in text, fmt
        assert SCRIPT in json.dumps(json.loads(text))  # the text is kept, escaped: nothing is stripped
