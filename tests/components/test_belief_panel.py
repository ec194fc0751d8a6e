"""Every protocol's result page shows the judge's belief panel under AppTest: its chart, each reading in words named for
when it was read, and the verdict beside the last belief. The browser test draws it in Chromium for desk and radar
(tests/e2e/test_belief_browser.py); here every protocol, without a browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.protocols.base import protocol_names
from tests.components.conftest import fake_app

CLAIM = "Masks reduce transmission of respiratory viruses"
PANEL = "**📈 The judge's belief, round by round**"
# each reading in words, named for when it was read (the markdown source: its brackets escaped)
READING = re.compile(r"^- (Before the debate|Round \d+|Step \d+|Role switch|Opening|Rebuttal|Closing|Debate|End) \\\(", re.MULTILINE)


def panels(node: Any) -> list[Any]:
    """The blocks whose own children include the panel's heading (the innermost block holding it)."""
    found = []
    children = list(getattr(node, "children", {}).values())
    if any(getattr(child, "type", "") == "markdown" and child.value == PANEL for child in children):
        found.append(node)
    for child in children:
        found += panels(child)
    return found


@pytest.mark.parametrize("protocol", protocol_names())
def test_the_belief_panel_shows_its_chart_its_readings_and_the_verdict(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, protocol: str
) -> None:
    app: AppTest = fake_app(monkeypatch, demo_data_dir)
    app.sidebar.selectbox(key="cfg.protocol").select(protocol).run()
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    assert not app.exception

    shown = panels(app.main)
    assert shown, f"{protocol}: no belief panel on the result page"
    panel = shown[-1]  # the panel as last drawn, when the run ended
    kinds = [getattr(child, "type", "") for child in panel.children.values()]
    assert "plotly_chart" in kinds, f"{protocol}: the panel has no chart"
    words = "\n".join(child.value for child in panel.children.values() if getattr(child, "type", "") == "markdown")
    assert READING.search(words), f"{protocol}: no reading named for when it was read in\n{words}"
    assert "The verdict" in words, f"{protocol}: the verdict is not set beside the last belief in\n{words}"
