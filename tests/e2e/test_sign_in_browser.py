"""In Chromium, a shared desk: sign in; a checker runs a claim but is refused the override; an editor overrides."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, serve_app
from tests.fakes import users_file

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses on ferries"


@pytest.fixture(scope="module")
def desk_url(tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[str]:
    users = users_file(tmp_path_factory.mktemp("desk") / "users.toml")
    yield from serve_app(tmp_path_factory, demo_data_dir, users_file=str(users))


def signed_in(browser, url: str, username: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.goto(url)
    page.get_by_role("textbox", name="User name").wait_for(timeout=300_000)
    assert page.locator("textarea").count() == 0  # nothing of the desk before signing in
    screenshot(page, "sign-in-form")
    page.get_by_role("textbox", name="User name").fill(username)
    page.get_by_role("textbox", name="Password").fill("pw-for-tests")
    page.get_by_role("button", name="Sign in").click()
    page.locator("h1", has_text="Verify a claim").wait_for(timeout=120_000)
    return page


def run_single(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("combobox", name="Protocol").click()
    page.get_by_role("option", name="single — Single agent (baseline)").click()
    page.locator("textarea").first.fill(CLAIM)
    page.get_by_role("button", name="Verify").click()
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)


def test_a_checker_is_refused_the_override_and_an_editor_records_it(browser, desk_url: str) -> None:  # type: ignore[no-untyped-def]
    page = signed_in(browser, desk_url, "bo")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("Bo Lind")).to_be_visible()
    run_single(page)
    page.get_by_text("Only an editor overrides verdicts; you are signed in as a checker").wait_for(timeout=30_000)
    assert page.get_by_text("Override the verdict").count() == 0
    screenshot(page, "sign-in-checker-refused")
    page.context.close()

    page = signed_in(browser, desk_url, "ana")
    run_single(page)
    page.get_by_text("Override the verdict").click()
    page.get_by_role("textbox", name="Reason (required)").fill("the ferry study was retracted")
    page.get_by_role("button", name="Record my verdict").click()
    page.get_by_text("Recorded:").wait_for(timeout=60_000)
    expect(page.get_by_text("by Ana Ruiz").first).to_be_visible()
    screenshot(page, "sign-in-editor-override")
    page.context.close()
