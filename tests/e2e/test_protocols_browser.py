"""The new protocols in Chromium: pick one (and a second to compare), run a claim, look at what the checker sees."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import pick_option, screenshot

pytestmark = pytest.mark.e2e
CLAIM = "Masks reduce transmission of respiratory viruses"


def pick(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    pick_option(page, label, option + " —")


def verify(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("textarea").first.fill(CLAIM)
    page.get_by_role("button", name="Verify").click()


# Each protocol's own panel is checked for every protocol without a browser (tests/components/test_protocol_pages.py);
# here one is drawn in Chromium: mermaid's, whose triplets are a data grid.
@pytest.mark.parametrize(("protocol", "marker"), [("mermaid", "Claim as triplets")])
def test_each_protocol_shows_its_own_panel(page, protocol: str, marker: str) -> None:  # type: ignore[no-untyped-def]
    pick(page, "Protocol", protocol)
    verify(page)
    page.get_by_text(re.compile(r"^Verdict\b")).first.wait_for(timeout=90_000)  # not the sidebar's "Whose ruling is the verdict"
    expect(page.get_by_text(marker).first).to_be_visible()  # waits for it: the panel may draw just after the verdict
    screenshot(page, f"verify-{protocol}")


def test_radar_beside_mad(page) -> None:  # type: ignore[no-untyped-def]
    pick(page, "Protocol", "radar")
    pick(page, "Compare with", "mad")
    verify(page)
    page.get_by_text("Side by side").first.wait_for(timeout=120_000)
    page.get_by_text("Omitted context the Scientist found").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stPlotlyChart"]').last.wait_for(timeout=30_000)
    screenshot(page, "verify-radar-beside-mad")


def test_the_protocol_picker_says_how_long_a_claim_took_here(page) -> None:  # type: ignore[no-untyped-def]
    """After a run, the picker's caption tells the next checker (or a teacher choosing a debate to show) what a claim of that
    protocol costs on this machine's models."""
    pick(page, "Protocol", "toolmad")
    verify(page)
    page.get_by_text(re.compile(r"^Verdict\b")).first.wait_for(timeout=90_000)
    pick(page, "Protocol", "mad")  # away and back: the sidebar is drawn again with the finished run in the store
    pick(page, "Protocol", "toolmad")
    took = page.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"^⏱️ Here, a toolmad claim took \d+ s"))
    expect(took).to_be_visible(timeout=30_000)
    took.scroll_into_view_if_needed()
    screenshot(page, "verify-protocol-wall-time")
