"""The judge's belief, round by round, drawn in Chromium: on the result page of desk (no debate) and radar (rounds), and
in History's replay. That every protocol's page shows the panel, its readings and the verdict is checked without a
browser (tests/components/test_belief_panel.py)."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import RESULTS, open_in_history, settled
from tests.e2e.test_protocols_browser import pick, verify

pytestmark = pytest.mark.e2e
PANEL = "The judge's belief, round by round"
READING = re.compile(
    r"^(Before the debate|Round \d+|Step \d+|Role switch|Opening|Rebuttal|Closing|Debate|End) \("
)  # each reading in words, named for when it was read: "Round 2 (after round 2: 4 turns, ...): supported 81%, ..."


def show_belief(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for the belief panel (its chart and its words), then keep a picture of it.

    The page's run ends first: while the result is still being redrawn the panel's words can stand before its chart
    (CI once found the words and no chart within 5 s on a busy machine)."""
    settled(page)
    box = page.locator('[data-testid="stVerticalBlock"]:visible').filter(has_text=PANEL).last  # the innermost shown block: the panel
    box.wait_for(timeout=60_000)
    box.scroll_into_view_if_needed()
    expect(box.locator('[data-testid="stPlotlyChart"]')).to_be_visible(timeout=30_000)
    expect(box.get_by_text(READING).first).to_be_visible()
    expect(box.get_by_text("The verdict", exact=False).first).to_be_visible()  # the verdict set beside the last belief
    page.wait_for_timeout(1500)  # plotly draws its lines after the frame appears
    RESULTS.mkdir(exist_ok=True)
    box.screenshot(path=str(RESULTS / f"{name}.png"))


@pytest.mark.parametrize("protocol", ["desk", "radar"])
def test_the_belief_plot_and_its_words_show_after_each_round(page, protocol: str) -> None:  # type: ignore[no-untyped-def]
    pick(page, "Protocol", protocol)
    verify(page)
    page.get_by_text("Decided by").first.wait_for(timeout=180_000)
    show_belief(page, f"verify-belief-{protocol}")
    if protocol == "radar":
        open_in_history(page, "Masks reduce")
        show_belief(page, "history-belief-radar")
