"""Exports stay inert where they are published: JSON-LD in a <script> block, JSON beside it, Markdown rendered to HTML."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipelines.core.errors import DebateDeskError
from pipelines.core.events import Event, VerdictOverridden
from pipelines.core.text.safety import public_http_url
from pipelines.record.export import export_run, to_claimreview
from pipelines.record.record_file import load_record
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
# Loopback and private addresses in the spellings a resolver or browser still reads as them (each one cited on 492a033).
DISGUISED_URLS = [
    "http://127.1/x",  # shorthand
    "http://10.1/x",
    "http://0177.0.0.1/x",  # octal
    "http://0x7f.1/x",  # hex
    "http://0x7f000001/x",
    "http://2130706433/x",  # one decimal number
    "http://017700000001/x",
    "http://localhost./x",  # trailing dot
    "http://127.0.0.1./x",
    "http://LOCALHOST/x",
    "http://app.localhost/x",
    "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/x",  # full-width letters
    "http://\uff11\uff12\uff17\u3002\uff10\u3002\uff10\u3002\uff11/x",  # full-width digits and ideographic full stops
    "http://[::ffff:127.0.0.1]/x",  # IPv4-mapped IPv6
    "http://[::ffff:7f00:1]/x",
    "http://[::127.0.0.1]/x",  # IPv4-compatible IPv6
    "http://[64:ff9b::a00:1]/x",  # NAT64 of 10.0.0.1
    "http://[fe80::1%25eth0]/x",  # link-local with a zone
    "http://[fd00::1]/x",  # unique local
    "http://intranet/x",  # no dot
    "http://printer.local/x",
    "http://wiki.home.arpa/x",
    "http://db.internal/x",
    "http://999.1.1.1.1/x",  # numeric but no address at all
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
        for i, url in enumerate([*HOSTILE_URLS, *DISGUISED_URLS, PUBLIC_URL], start=1)
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
    with pytest.raises(DebateDeskError, match="is not one a ClaimReview rates"):  # the override's label is no verdict
        to_claimreview(summary, events)
    doc = to_claimreview(summary, [e for e in events if not isinstance(e, VerdictOverridden)])  # the model's SUPPORTS
    assert [c["url"] for c in doc["citation"]] == [PUBLIC_URL]


@pytest.mark.parametrize("url", DISGUISED_URLS)
def test_a_loopback_or_private_address_is_not_citable_however_it_is_spelled(url: str) -> None:
    assert not public_http_url(url)


@pytest.mark.parametrize(
    "url", [PUBLIC_URL, "http://93.184.215.14/x", "https://[2606:4700::1111]/", "https://example.org./x", "https://b\u00fccher.example/x"]
)
def test_a_public_address_stays_citable(url: str) -> None:
    assert public_http_url(url)


def test_the_markdown_report_links_no_disguised_address() -> None:
    summary, events = hostile_run()
    report = export_run(summary, events, "md")
    assert f"<{PUBLIC_URL}>" in report
    for url in DISGUISED_URLS:
        assert f"<{url}>" not in report, url


def test_json_exports_cannot_close_a_script_block_and_parse_to_the_same_record() -> None:
    summary, events = hostile_run()
    ruled = [e for e in events if not isinstance(e, VerdictOverridden)]  # a ClaimReview needs a verdict it rates
    for fmt, kept in (("json", events), ("claimreview", ruled)):
        text = export_run(summary, kept, fmt)
        assert "<" not in text and ">" not in text and "\u2028" not in text, fmt
        assert SCRIPT in json.dumps(json.loads(text))  # the text is kept, escaped: nothing is stripped
