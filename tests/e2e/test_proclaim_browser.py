"""A finished `proclaim` run in Chromium: the evidence inspector and the panel open under the transcript."""

import re

import pytest

from tests.e2e.conftest import pick_option, screenshot

pytestmark = pytest.mark.e2e


def test_courtroom_inspector_and_panel(page) -> None:  # type: ignore[no-untyped-def]
    pick_option(page, "Protocol", re.compile(r"^proclaim"))  # waits for the select to draw: a click at page load timed out once under load
    page.locator("textarea").first.fill("Masks reduce transmission of respiratory viruses")
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Court record").wait_for(timeout=180_000)

    page.get_by_role("tab", name=re.compile("Evidence inspector")).click()
    inspector = page.locator('[role="tabpanel"]:visible').first
    inspector.locator('[data-testid="stDataFrame"]').wait_for(timeout=120_000)
    inspector.get_by_text("Admissibility: relevance × credibility").wait_for(timeout=120_000)
    assert inspector.get_by_text(re.compile(r"\d+ of \d+ exhibits")).is_visible()
    screenshot(page, "proclaim-inspector")

    page.get_by_role("tab", name=re.compile("Panel")).click()
    panel = page.locator('[role="tabpanel"]:visible').first
    panel.get_by_text("Confidence, term by term").wait_for(timeout=120_000)
    for judge in ("Judge 1", "Judge 2", "Judge 3"):
        assert panel.get_by_text(judge, exact=True).first.is_visible()
    assert panel.get_by_text("c_final").first.is_visible()
    screenshot(page, "proclaim-panel")
