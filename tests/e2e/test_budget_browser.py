"""In Chromium: a spend limit set on the Settings page stops a run between calls; its events stay, History says why, and it
resumes once the limit is raised for it on History."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, start_claim
from tests.e2e.test_settings_browser import nav

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses in call centres"


def set_call_limit(page, calls: int) -> None:  # type: ignore[no-untyped-def]
    nav(page, "Settings")
    limit = page.get_by_role("spinbutton", name="Calls per run")
    limit.fill(str(calls))
    limit.press("Enter")
    expect(limit).to_have_value(str(calls), timeout=30_000)
    page.wait_for_timeout(1000)  # the rerun that stores the settings


def test_a_run_stopped_by_its_budget_keeps_its_events_and_resumes_when_raised(page) -> None:  # type: ignore[no-untyped-def]
    set_call_limit(page, 1)
    screenshot(page, "budget-settings")
    nav(page, "Verify a claim")
    start_claim(page, CLAIM, "single — Single agent (baseline)")  # one call writes the query, one answers

    page.get_by_text("stopped by budget: 1 of 1 model calls").first.wait_for(timeout=120_000)
    page.get_by_text("Everything so far is kept").first.wait_for(timeout=30_000)
    page.get_by_text("This run is interrupted").wait_for(timeout=60_000)  # the run has ended
    page.get_by_text("1 model calls").first.wait_for(timeout=30_000)
    assert page.get_by_text("Decided by").count() == 0, "no verdict: the answer call was never made"
    screenshot(page, "budget-stopped-verify")

    nav(page, "History")
    page.get_by_role("textbox", name="Claim contains").fill("call centres")
    page.keyboard.press("Enter")
    page.get_by_role("combobox", name="Open a run").click()
    page.get_by_role("option").first.click()
    # the run's status line (and the table's status column) say why it stopped
    page.locator('[data-testid="stCaptionContainer"]', has_text="interrupted · stopped by budget: 1 of 1 model calls").wait_for(
        timeout=60_000
    )
    page.get_by_text(re.compile(r"Step \d+ of \d+")).wait_for(timeout=60_000)  # the replay
    page.get_by_text("raise the limit on the Settings page to go on").first.wait_for(timeout=30_000)  # the replay's verdict box
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    screenshot(page, "budget-stopped-history")

    # The run keeps its limit on a plain resume; the person at a one-person desk (an editor on a shared one) raises it here.
    page.get_by_text("Resume with other limits").click()
    limit = page.get_by_role("spinbutton", name="Calls per run")
    limit.fill("0")  # no limit
    limit.press("Enter")
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Resume with these limits").click()
    page.locator("h1", has_text="Verify a claim").wait_for(timeout=60_000)
    page.get_by_text("Decided by").first.wait_for(timeout=120_000)
    page.get_by_text("the journal answered the calls already made").first.wait_for(timeout=30_000)
    screenshot(page, "budget-resumed")
