"""In Chromium: from History, re-run a stored run's evidence with another protocol (no new search); both runs link to each other."""

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.e2e.conftest import pick_option, screenshot, start_claim
from tests.e2e.test_settings_browser import nav

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses in libraries"


def open_run(page, option: str) -> None:  # type: ignore[no-untyped-def]
    """Choose the run in History's box and wait for its replay; choose again if a rerun under load dropped the choice.
    While one replay gives way to another both may be on screen a moment, so the box's value says which run is open."""
    for attempt in range(3):
        pick_option(page, "Open a run", option)
        try:
            expect(page.get_by_role("combobox", name="Open a run")).to_have_value(re.compile(f"· {option} ·"), timeout=20_000)
            page.get_by_text(re.compile(r"Step \d+ of \d+")).first.wait_for(timeout=20_000)
            return
        except (PlaywrightTimeoutError, AssertionError):
            if attempt == 2:
                raise


def test_a_rerun_on_frozen_evidence_with_another_protocol_links_both_runs(page) -> None:  # type: ignore[no-untyped-def]
    start_claim(page, CLAIM, "single — Single agent (baseline)")
    page.get_by_text("Decided by").first.wait_for(timeout=120_000)

    nav(page, "History")
    page.get_by_role("textbox", name="Claim contains").fill("libraries")
    page.keyboard.press("Enter")
    page.get_by_text("1 run of this desk", exact=True).wait_for(timeout=60_000)  # the filter has applied: the box lists this run alone
    open_run(page, "single")  # the run is open and replayed
    page.get_by_text("Re-run on this run's evidence").click()
    pick_option(page, "Re-run with protocol", "desk · Desk (default)")
    screenshot(page, "rerun-control")
    page.get_by_role("button", name="Re-run on frozen evidence").click()

    page.locator("h1", has_text="Verify a claim").wait_for(timeout=60_000)
    page.get_by_text("on its frozen evidence: no new search").wait_for(timeout=60_000)
    page.get_by_text("Decided by").first.wait_for(timeout=180_000)
    page.get_by_text("Run complete").wait_for(timeout=60_000)
    screenshot(page, "rerun-finished")

    nav(page, "History")
    page.get_by_role("textbox", name="Claim contains").fill("libraries")
    page.keyboard.press("Enter")
    page.get_by_text("2 runs of this desk").wait_for(timeout=60_000)
    open_run(page, "desk")
    back = page.get_by_role("button", name="Re-run of single")
    expect(back).to_be_visible(timeout=60_000)
    # Issue 46: the re-run joins its source run's queued claim (a published claim's record then shows it, flagged)
    expect(page.get_by_text("In the claims queue: checking")).to_be_visible(timeout=30_000)
    screenshot(page, "rerun-history-link")
    back.click()  # the link opens the source run, which links forward to its re-run
    expect(page.get_by_role("button", name="Re-run as desk")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("combobox", name="Open a run")).to_have_value(re.compile(r"· single ·"), timeout=30_000)
    screenshot(page, "rerun-history-source")
