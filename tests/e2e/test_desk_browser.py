"""The default protocol in Chromium: the exhibits with their three stance bars, and the verdict with what it rests on."""

import pytest

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e
CLAIM = "Masks reduce transmission of respiratory viruses"


def test_desk_shows_each_exhibits_stance_and_the_verdict_it_rests_on(page) -> None:  # type: ignore[no-untyped-def]
    page.locator("textarea").first.fill(CLAIM)
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)  # nothing chosen: the default protocol, desk
    panel = page.locator('[data-testid="stVerticalBlock"]').filter(has_text="Exhibits and their stance").last
    panel.wait_for(timeout=30_000)
    assert "read)" in panel.inner_text()
    grid = panel.locator('[data-testid="stDataFrame"]').first
    grid.wait_for(timeout=30_000)
    box = grid.bounding_box()
    assert box is not None and box["height"] > 150, "one row per exhibit (the grid is drawn on a canvas: its text is in the screenshot)"
    verdict = page.locator('[data-testid="stVerticalBlock"]').filter(has_text="Verdict from the exhibits").last
    text = verdict.inner_text()
    assert "supported" in text and "if the exhibits settle it" in text
    assert "E1" in text and "“" in text, "the exhibits it rests on, with their quoted sentences"
    assert "uncalibrated" in text, "the fake model has no calibration, and the page says so"
    screenshot(page, "verify-desk")
