"""The running app in Chromium: submit a claim, watch it run, find the verdict."""

import pytest

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e


def test_submit_a_claim_and_find_the_verdict(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("textarea").first.fill("Masks reduce transmission of respiratory viruses")
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)  # only the verdict box says who decided
    heading = page.locator("h3", has_text="Verdict").first.inner_text()
    assert any(label in heading for label in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")), heading
    screenshot(page, "verify-default")
