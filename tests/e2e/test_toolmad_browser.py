"""The running app in Chromium streams a `toolmad` debate: rounds of arguments, score badges, the verdict and why."""

import pytest

from tests.e2e.conftest import pick_option, screenshot

pytestmark = pytest.mark.e2e


def choose_toolmad(page) -> None:  # type: ignore[no-untyped-def]
    """desk is the default: pick toolmad in the sidebar."""
    pick_option(page, "Protocol", "toolmad —")


def test_a_toolmad_debate_streams_rounds_badges_and_a_judged_verdict(page) -> None:  # type: ignore[no-untyped-def]
    choose_toolmad(page)
    page.locator("textarea").first.fill("Quantum chromodynamics explains stock prices")
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by judge").first.wait_for(timeout=120_000)
    for heading in ("Round 1", "Round 2", "Round 3", "Ruling"):
        assert page.get_by_role("heading", name=heading).count() == 1, heading
    messages = page.get_by_test_id("stChatMessage")
    assert messages.count() == 7, "two debaters in each of three rounds, then the judge"
    for number in (1, 2):
        for agent in ("RAG", "Search"):
            assert page.get_by_text(f"{agent} · round {number}").count() == 1
    assert page.get_by_text("F 0.00 < 0.70").count() == 6, "an F badge under every argument"
    assert page.get_by_text("AR 0.").count() >= 6
    assert page.get_by_text("unsupported:").count() >= 6, "the statements, marked"
    assert page.get_by_text("web unavailable: corpus search instead").count() == 3
    assert page.get_by_text("Decided by judge. Why: no consensus after 3 round(s)").count() == 1
    screenshot(page, "toolmad-debate")


def test_an_agreed_claim_stops_with_consensus(page) -> None:  # type: ignore[no-untyped-def]
    choose_toolmad(page)
    page.locator("textarea").first.fill("Masks reduce transmission of respiratory viruses")
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by consensus").first.wait_for(timeout=120_000)
    assert page.get_by_role("heading", name="Round 2").count() == 0
    assert page.get_by_text("F 1.00 ≥ 0.70").count() == 2
    screenshot(page, "toolmad-consensus")
