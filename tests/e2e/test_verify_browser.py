"""The running app in Chromium: submit a claim, watch it run, find the verdict."""

import pytest

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e


def test_submit_a_claim_and_find_the_verdict(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("textarea").first.fill("Masks reduce transmission of respiratory viruses")
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Verdict").first.wait_for(timeout=90_000)
    assert page.get_by_text("SUPPORTS", exact=True).first.is_visible()  # the badge, not the collapsed stage log
    screenshot(page, "verify-single")
