"""The judge's belief, round by round, in Chromium: on the result page for desk, toolmad and radar, and in History's replay."""

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_in_history, screenshot
from tests.e2e.test_protocols_browser import pick, verify

pytestmark = pytest.mark.e2e
PANEL = "The judge's belief, round by round"


@pytest.mark.parametrize("protocol", ["desk", "toolmad", "radar"])
def test_the_belief_plot_and_its_words_show_after_each_round(page, protocol: str) -> None:  # type: ignore[no-untyped-def]
    pick(page, "Protocol", protocol)
    verify(page)
    page.get_by_text("Decided by").first.wait_for(timeout=180_000)
    panel = page.get_by_text(PANEL).first
    expect(panel).to_be_visible()
    expect(page.get_by_text("supported", exact=False).first).to_be_visible()
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=30_000)
    expect(page.get_by_text("The verdict", exact=False).first).to_be_visible()  # the last line compares the verdict with the belief
    panel.scroll_into_view_if_needed()
    screenshot(page, f"verify-belief-{protocol}")
    if protocol == "radar":
        open_in_history(page, "Masks reduce")
        page.get_by_text(PANEL).first.wait_for(timeout=60_000)
        page.get_by_text(PANEL).first.scroll_into_view_if_needed()
        screenshot(page, "history-belief-radar")
