"""The default protocol in Chromium: the exhibits with their three stance bars, and the verdict with what it rests on."""

import pytest

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e
CLAIM = "Masks reduce transmission of respiratory viruses"


def test_desk_shows_each_exhibits_stance_and_the_verdict_it_rests_on(page) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 1800})
    page.locator("textarea").first.fill(CLAIM)
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)  # nothing chosen: the default protocol, desk
    panel = page.locator('[data-testid="stVerticalBlock"]').filter(has_text="Exhibits and their stance").last
    panel.wait_for(timeout=30_000)
    assert "read)" in panel.inner_text()
    table = panel.locator("table").first
    table.wait_for(timeout=30_000)
    assert table.locator("tbody tr").count() >= 5, "one row per exhibit, in a table a screen reader can read"
    first_row = table.locator("tbody tr").first.inner_text()
    assert "supports" in first_row and "contradicts" in first_row and "does not address" in first_row
    assert "“" in first_row, "the quoted sentences, in full"
    assert "None" not in panel.inner_text()
    box = table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280, "the table fits a 1280 px window"
    text = panel.inner_text()
    assert "Weighed together" in text and "uncalibrated" in text, "the fake model has no calibration, and the page says so"
    assert page.get_by_text("Verdict from the exhibits").count() == 0, "one verdict box: the card's"
    card = page.locator('[data-testid="stVerticalBlock"]').filter(has_text="What it rests on").last
    assert "E1" in card.inner_text() and "“" in card.inner_text(), "the card names the exhibits it rests on, with their quoted sentences"
    screenshot(page, "verify-desk")
