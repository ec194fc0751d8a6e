"""In Chromium, on a fake backend slowed to a model's pace: the verdict card's quoted exhibits and confidence, the cost counting up while
the run goes (and a run answered from the cache saying so), and a checker's override on the card, in its audit trail and in History."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, open_in_history, pick_option, screenshot, serve_app, start_claim

pytestmark = pytest.mark.e2e

DEMO_DOCUMENTS = (ROOT / "corpora" / "demo" / "documents.jsonl").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def slow_url(tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[str]:
    yield from serve_app(tmp_path_factory, demo_data_dir, fake_latency_s="0.15")


@pytest.fixture
def slow_page(browser, slow_url: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.goto(slow_url)
    page.locator("textarea").first.wait_for(timeout=300_000)
    yield page
    context.close()


def choose(page, protocol: str) -> None:  # type: ignore[no-untyped-def]
    pick_option(page, "Protocol", f"{protocol} —")


def card(page, heading: str = "Verdict"):  # type: ignore[no-untyped-def]
    """The bordered box that holds the verdict's heading (the first: History's hidden compare tab may hold another)."""
    return page.locator("h3", has_text=heading).first.locator("xpath=ancestor::div[@data-testid='stVerticalBlock'][2]")


def cost_line(page) -> str:  # type: ignore[no-untyped-def]
    found = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=re.compile(r"Cost( so far)?:"))
    return found.first.inner_text() if found.count() else ""


def test_the_card_quotes_its_exhibits_and_states_its_confidence_or_why_not(slow_page) -> None:  # type: ignore[no-untyped-def]
    page = slow_page
    start_claim(page, "Masks reduce transmission of respiratory viruses at work")  # desk, the default; the fake rules on it (0.60)
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)
    box = card(page)
    # The fake model has no calibration, so the card shows a lean and a ranking, never a frequency (issue 51).
    expect(box.get_by_text(re.compile(r"^Ranking 0\.\d\d, unmeasured$"))).to_be_visible()
    expect(box.get_by_text("No calibration was fitted for this model and question", exact=False)).to_be_visible()
    expect(box.get_by_text("the protocol's word: SUPPORTS").or_(box.get_by_text("the protocol's word: REFUTES")).first).to_be_visible()
    expect(box.get_by_text("fake is not a real model").first).to_be_visible()  # the models' caveat stands on the card
    quotes = box.locator("blockquote")
    assert quotes.count() >= 2, "two or three exhibits, each with its quoted sentences"
    for quoted in re.findall(r"“([^”]+)”", quotes.first.inner_text()):
        assert quoted in DEMO_DOCUMENTS, f"a quote is a sentence of the corpus, word for word: {quoted!r}"
    assert box.locator("strong").filter(has_text=re.compile(r"^E\d+$")).count() >= 2, "each exhibit named by its id"
    expect(box.get_by_text("How this was decided (engineering detail)")).to_be_visible()
    page.get_by_text("Run complete").wait_for(timeout=60_000)  # the script has ended: the page holds this run only
    screenshot(page, "card-desk-quoted-exhibits")

    choose(page, "single")
    start_claim(page, "Masks reduce transmission of respiratory viruses in trains")
    page.get_by_text("Decided by agent").first.wait_for(timeout=300_000)
    box = card(page)
    expect(box.get_by_text("Confidence: not stated by this protocol")).to_be_visible()
    expect(box.get_by_text("one agent writes a label with its answer; nothing measures how sure it is.")).to_be_visible()
    assert box.locator("blockquote").count() >= 1
    page.get_by_text("Run complete").wait_for(timeout=60_000)  # the script has ended: the page holds this run only
    screenshot(page, "card-single-no-confidence")


def test_the_cost_counts_up_while_the_run_goes_and_a_cached_run_says_so(slow_page) -> None:  # type: ignore[no-untyped-def]
    page = slow_page
    claim = "Masks reduce transmission of respiratory viruses in choirs"
    start_claim(page, claim)
    seen: list[str] = []
    evidence = page.locator('[data-testid="stExpander"]').filter(has=page.locator("summary", has_text=re.compile(r"Evidence$")))
    evidence_while_running = False
    deadline = time.time() + 300
    while time.time() < deadline:
        line = cost_line(page)
        if line and (not seen or line != seen[-1]):
            seen.append(line)
        if "so far" in line and evidence.locator('[data-testid="stDataFrame"]').count():
            evidence_while_running = True
        if "Cost:" in line and "so far" not in line:  # the run ended: the line says "Cost", no longer "Cost so far"
            break
        page.wait_for_timeout(250)
    live = [line for line in seen if "so far" in line]
    calls = {int(m.group(1)) for line in live if (m := re.search(r"(\d+) model calls?", line))}
    assert len(calls) >= 3, f"the call count grew while the run went: {seen}"
    elapsed = [int(m.group(1)) for line in live if (m := re.search(r"(\d+) s elapsed", line))]
    assert elapsed and max(elapsed) > min(elapsed), f"the elapsed time counted up: {live}"
    assert evidence_while_running, "the evidence found so far shows while the exhibits are read, not only at the end"
    assert re.search(r"\d+ model calls · [\d,]+ tokens in · [\d,]+ out · [\d.]+ s of model time · \d+ s wall time", seen[-1]), seen[-1]
    page.get_by_text("Cost by stage").click()
    table = page.locator("table").filter(has_text="of which cached").first
    expect(table.get_by_text("stances", exact=True)).to_be_visible()
    expect(table.get_by_text("total")).to_be_visible()
    screenshot(page, "cost-live-finished")

    start_claim(page, claim)  # the same claim with the same models: the response cache answers
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)
    page.wait_for_timeout(1500)
    again = cost_line(page)
    assert "answered from the cache" in again, again
    screenshot(page, "cost-cached-run")


def test_an_override_shows_on_the_card_with_its_audit_trail_and_in_history(slow_page) -> None:  # type: ignore[no-untyped-def]
    page = slow_page
    claim = "Masks reduce transmission of respiratory viruses in night buses"
    page.get_by_role("textbox", name="Your name (audit trail)").fill("Ana Ruiz")
    page.keyboard.press("Enter")
    choose(page, "single")
    start_claim(page, claim)
    page.get_by_text("Decided by agent").first.wait_for(timeout=300_000)
    model_label = card(page).locator("h3").inner_text()
    page.get_by_text("Run complete").wait_for(timeout=60_000)
    page.get_by_text("Override the verdict").click()
    pick_option(page, "Your verdict", "NOT ENOUGH INFO")
    page.get_by_role("textbox", name="Reason (required)").fill("the only study is a <b>preprint</b>")
    page.get_by_role("button", name="Record my verdict").click()

    page.locator("h3", has_text="Checker's verdict").first.wait_for(timeout=60_000)
    checker = card(page, "Checker's verdict")
    expect(checker.locator("h3")).to_contain_text("NOT ENOUGH INFO")
    expect(
        checker.get_by_text(
            re.compile(r"^Set by Ana Ruiz at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\. Why: the only study is a <b>preprint</b>$")
        )
    ).to_be_visible()
    expect(checker.locator("h4", has_text="The model's verdict, kept in the record")).to_be_visible()
    assert ("SUPPORTED" in model_label) == ("SUPPORTED" in checker.locator("h4").inner_text()), "the model's verdict beneath, unchanged"
    expect(checker.get_by_text("Audit trail")).to_be_visible()
    assert checker.get_by_text("Decided by agent.", exact=True).count() == 1, (
        "the model's card once, beneath; nothing left of the card it replaced"
    )
    expect(checker.locator("li").filter(has_text="Ana Ruiz").filter(has_text="set the verdict to NOT ENOUGH INFO")).to_be_visible()
    assert checker.locator("b").count() == 0, "the note is shown as text, never as markup"
    screenshot(page, "override-on-card")

    open_in_history(page, "night buses")
    page.locator("h3", has_text="Checker's verdict").first.wait_for(timeout=60_000)
    checker = card(page, "Checker's verdict")
    expect(checker.locator("h3")).to_contain_text("NOT ENOUGH INFO")
    expect(checker.locator("h4", has_text="The model's verdict, kept in the record")).to_be_visible()
    expect(checker.locator("li").filter(has_text="Ana Ruiz").filter(has_text="the only study is a <b>preprint</b>")).to_be_visible()
    assert checker.get_by_text("Decided by agent.", exact=True).count() == 1
    expect(page.get_by_role("button", name="CSV row")).to_be_visible()
    screenshot(page, "override-in-history")
