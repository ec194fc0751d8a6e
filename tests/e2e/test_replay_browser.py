"""In Chromium: a teacher opens a run on the Replay page, presses Play, and the page moves on by itself, a step every
few seconds on the page's own clock, until the verdict; then Play is offered again."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import pick_option, screenshot, settled, start_claim

pytestmark = pytest.mark.e2e

CLAIM = "Tides follow the Moon, played for a class"


def test_a_played_replay_moves_on_by_itself_and_stops_at_the_verdict(page) -> None:  # type: ignore[no-untyped-def]
    start_claim(page, CLAIM, "single — Single agent (baseline)")
    page.get_by_text(re.compile(r"^Verdict\b")).first.wait_for(timeout=90_000)
    settled(page)
    page.get_by_role("link", name="Replay").click()
    pick_option(page, "Run to replay", "played for a class")
    first = page.get_by_text(re.compile(r"^Step 1 of (\d+)"))
    first.wait_for(timeout=60_000)
    total = int(re.search(r"of (\d+)", first.inner_text()).group(1))  # type: ignore[union-attr]
    assert total > 2
    speed = page.locator('[data-testid="stSlider"]', has_text="Seconds a step").get_by_role("slider")
    speed.focus()
    page.keyboard.press("ArrowLeft")  # 4 -> 2 seconds a step
    settled(page)
    page.get_by_role("button", name="▶ Play").click()
    page.get_by_role("button", name="⏸ Pause").wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"^Step 2 of ")).wait_for(timeout=15_000)  # nobody touched it
    screenshot(page, "replay-playing")
    page.get_by_text(re.compile(rf"^Step {total} of {total}")).wait_for(timeout=20_000 + 4_000 * total)
    page.get_by_role("button", name="▶ Play").wait_for(timeout=15_000)  # stopped at the verdict
    expect(page.get_by_text(re.compile(rf"^Step {total} of {total}"))).to_be_visible()
