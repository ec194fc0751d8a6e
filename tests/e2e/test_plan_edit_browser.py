"""In Chromium: step mode pauses proclaim after its decomposition; the checker rewrites the premises, which are searched and kept in the audit trail."""

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, start_claim

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses in concert halls"
PREMISES = "Cloth masks cut droplet spread indoors\nMasks lower infection rates at crowded events"


def test_editing_proclaim_premises_in_step_mode(page) -> None:  # type: ignore[no-untyped-def]
    start_claim(page, CLAIM, "proclaim — Courtroom (PROClaim)", name="Ana Ruiz", step_mode=True)

    page.get_by_text("Paused before the first search — your turn").wait_for(timeout=120_000)
    premises = page.get_by_role("textbox", name="Edit the premises")
    expect(premises).not_to_have_value("", timeout=30_000)
    planned = premises.input_value()
    premises.fill(PREMISES)
    screenshot(page, "plan-edit-paused")
    page.get_by_role("button", name="Continue").click()

    page.get_by_text("Paused after round 1 — your turn").wait_for(timeout=180_000)
    edit = page.get_by_text("rewrote the premises").first  # the audit trail, with who and when
    edit.wait_for(timeout=30_000)
    expect(edit).to_contain_text("→ “Cloth masks cut droplet spread indoors; Masks lower infection rates at crowded events”")
    expect(page.get_by_text("Ana Ruiz").first).to_be_visible()
    screenshot(page, "plan-edit-round-1")
    page.get_by_role("button", name="Stop and rule").click()
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)
    assert planned.splitlines()[0] not in PREMISES
    screenshot(page, "plan-edit-finished")
