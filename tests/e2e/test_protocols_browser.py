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


@pytest.mark.parametrize(
    ("protocol", "marker"),
    [
        ("madke", "Evidence each debater picked"),
        ("mermaid", "Claim as triplets"),
        ("mad", "Two debaters argued from what the model knows (this protocol retrieves no evidence); a judge then ruled."),
    ],
)
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
