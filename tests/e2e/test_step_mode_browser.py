"""In Chromium: a step-mode run where the checker edits a query, continues, finishes; then History replays it step by step."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_in_history, screenshot, sidebar_toggle

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses in crowded schools"


def test_step_mode_edit_continue_finish_then_replay_in_history(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("textbox", name="Your name (audit trail)").fill("Ana Ruiz")
    page.keyboard.press("Enter")
    sidebar_toggle(page, "Step mode")
    page.get_by_role("combobox", name="Protocol").click()  # `single` pauses before the search and before the answer
    page.get_by_role("option", name="single — Single agent (baseline)").click()
    page.locator("textarea").first.fill(CLAIM)
    page.get_by_role("button", name="Verify").click()

    page.get_by_text("Paused before the first search — your turn").wait_for(timeout=90_000)
    query = page.get_by_role("textbox", name="Next query for Analyst")
    # The form's heading can reach the page a moment before its widgets have their values: wait for the value, not just the box.
    expect(query).to_have_value("masks reduce transmission respiratory viruses crowded schools", timeout=30_000)
    query.fill("cloth masks classroom transmission study")
    screenshot(page, "step-mode-paused")
    page.get_by_role("button", name="Continue").click()

    page.get_by_text("Paused after round 1 — your turn").wait_for(timeout=90_000)
    page.get_by_text("edited Analyst's next query").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Continue").click()

    page.get_by_text(re.compile(r"^Verdict\b")).first.wait_for(timeout=90_000)  # not the sidebar's "Whose ruling is the verdict"
    page.get_by_text("query: “cloth masks classroom transmission study”").first.wait_for(timeout=30_000)  # the edited query was used
    screenshot(page, "step-mode-finished")

    open_in_history(page, "crowded schools")
    page.get_by_text("Step 6 of 6").wait_for(timeout=60_000)
    page.get_by_text("edited Analyst's next query").first.wait_for(timeout=30_000)
    page.get_by_text("query: “cloth masks classroom transmission study”").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Previous").click()
    page.get_by_text("Step 5 of 6: Before the verdict").wait_for(timeout=30_000)  # the answer, without the ruling
    page.get_by_text("Label: ").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Previous").click()
    page.get_by_text("Step 4 of 6").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    assert not page.get_by_text("Label: ").first.is_visible(), "before the answer step, no answer is shown"
    screenshot(page, "history-step-through")


PASTED = "The district's own 2024 survey found no change in absences after masks were required"


def test_evidence_pasted_but_not_added_is_kept_when_the_checker_continues(page) -> None:  # type: ignore[no-untyped-def]
    """Issue 46 (the third report): text pasted into the evidence box without pressing "Add this evidence" was lost on
    Continue. It is added, with the checker's name, and the run and its trail have it."""
    page.get_by_role("textbox", name="Your name (audit trail)").fill("Ana Ruiz")
    page.keyboard.press("Enter")
    sidebar_toggle(page, "Step mode")
    page.get_by_role("combobox", name="Protocol").click()
    page.get_by_role("option", name="single — Single agent (baseline)").click()
    page.locator("textarea").first.fill(CLAIM + " in district surveys")
    page.get_by_role("button", name="Verify").click()

    page.get_by_text("Paused before the first search — your turn").wait_for(timeout=90_000)
    expect(page.get_by_role("textbox", name="Next query for Analyst")).not_to_have_value("", timeout=30_000)
    page.get_by_text("Paste evidence of your own").click()
    page.get_by_role("textbox", name="Text").fill(PASTED)
    page.get_by_role("textbox", name="Title (optional)").fill("District survey 2024")
    screenshot(page, "step-mode-pasted-not-added")
    page.get_by_role("button", name="Continue").click()  # not "Add this evidence"

    page.get_by_text("Paused after round 1 — your turn").wait_for(timeout=90_000)
    trail = page.get_by_text(re.compile(r"added evidence E\d+: “The district's own 2024 survey"))
    trail.first.wait_for(timeout=30_000)  # in the trail, with the evidence id the run gave it
    page.get_by_role("button", name="Continue").click()
    page.get_by_text(re.compile(r"^Verdict\b")).first.wait_for(timeout=90_000)
    screenshot(page, "step-mode-pasted-kept")

    open_in_history(page, "in district surveys")  # the stored run has it: its record, replayed
    page.get_by_text(re.compile(r"added evidence E\d+: “The district's own 2024 survey")).first.wait_for(timeout=60_000)
