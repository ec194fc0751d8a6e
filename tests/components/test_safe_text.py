import pytest

from components.evidence_table import evidence_frame
from pipelines.core.domain import Evidence
from pipelines.core.text.safety import escape_markdown


@pytest.mark.parametrize(
    "hostile",
    [
        "![x](http://track.er/p.gif)",
        "[click](javascript:alert(1))",
        "<script>alert(1)</script>",
        ":red[fake alert]",
        "$\\LaTeX$",
        "# Heading",
    ],
)
def test_markup_in_untrusted_text_is_escaped(hostile: str) -> None:
    escaped = escape_markdown(hostile)
    for ch in "![]()<>:$#":
        assert f"\\{ch}" in escaped or ch not in hostile


def test_evidence_table_drops_non_web_links() -> None:
    items = [
        Evidence(id="E1", source="web", text="t", url="javascript:alert(1)"),
        Evidence(id="E2", source="web", text="t", url="https://example.org/a"),
    ]
    frame = evidence_frame(items)
    assert list(frame["link"]) == ["", "https://example.org/a"], "no link is an empty cell, never None"
