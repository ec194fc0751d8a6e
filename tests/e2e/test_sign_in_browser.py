"""In Chromium, a shared desk with two people signed in at once (an editor and a checker, two browser contexts): each
stays signed in across reloads and new tabs; the checker cannot override, by the page or by a name in the address; the
editor's override carries the editor's name; signing out ends the session, and a reload asks to sign in again."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, serve_app, settled, start_claim
from tests.fakes import users_file
from tests.stores import DATABASES, postgres_database

pytestmark = pytest.mark.e2e

CLAIM = "Masks reduce transmission of respiratory viruses on ferries"


@pytest.fixture(scope="module", params=DATABASES)
def desk_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[str]:
    """The desk with a users file, its runs and sessions on SQLite, or on PostgreSQL when a test server is configured."""
    users = users_file(tmp_path_factory.mktemp("desk") / "users.toml")
    if request.param == "sqlite":
        yield from serve_app(tmp_path_factory, demo_data_dir, users_file=str(users))
        return
    with postgres_database() as url:
        yield from serve_app(tmp_path_factory, demo_data_dir, users_file=str(users), database_url=url)


def sidebar(page):  # type: ignore[no-untyped-def]
    return page.locator('[data-testid="stSidebar"]')


def signed_in(browser, url: str, username: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.goto(url)
    page.get_by_role("textbox", name="User name").wait_for(timeout=300_000)
    assert "/desk/sign-in" in page.url and page.locator("textarea").count() == 0  # nothing of the desk before signing in
    screenshot(page, f"sign-in-form-{username}")
    page.get_by_role("textbox", name="User name").fill(username)
    page.get_by_role("textbox", name="Password").fill("pw-for-tests")
    page.get_by_role("button", name="Sign in").click()
    page.locator("h1", has_text="Verify a claim").wait_for(timeout=300_000)
    cookie = next(c for c in context.cookies() if c["name"] == "debatedesk_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and username not in page.url
    return page


def run_single(page) -> None:  # type: ignore[no-untyped-def]
    start_claim(page, CLAIM, "single — Single agent (baseline)")
    page.get_by_text("Decided by").first.wait_for(timeout=300_000)
    page.get_by_text("Run complete").first.wait_for(timeout=120_000)
    settled(page)  # the card shows before the page's run ends; what is done next must not race the run's last redraw


def test_an_editor_and_a_checker_at_once_stay_signed_in_and_only_the_editor_overrides(browser, desk_url: str) -> None:  # type: ignore[no-untyped-def]
    editor = signed_in(browser, desk_url, "ana")
    checker = signed_in(browser, desk_url, "bo")
    expect(sidebar(editor).get_by_text("Ana Ruiz")).to_be_visible()
    expect(sidebar(checker).get_by_text("Bo Lind")).to_be_visible()

    for page, name in ((editor, "Ana Ruiz"), (checker, "Bo Lind")):
        page.reload()  # a reload keeps each signed in as themselves
        page.locator("h1", has_text="Verify a claim").wait_for(timeout=120_000)
        expect(sidebar(page).get_by_text(name)).to_be_visible(timeout=60_000)
    tab = checker.context.new_page()  # and so does a new tab
    tab.goto(desk_url + "/history")
    tab.locator("h1", has_text="History").wait_for(timeout=120_000)
    expect(sidebar(tab).get_by_text("Bo Lind")).to_be_visible(timeout=60_000)
    tab.close()

    run_single(checker)
    checker.get_by_text("Only an editor overrides verdicts; you are signed in as a checker").wait_for(timeout=30_000)
    assert checker.get_by_text("Override the verdict").count() == 0
    screenshot(checker, "sign-in-checker-refused")
    checker.goto(desk_url + "/?checker=Ana%20Ruiz")  # a name in the address names nobody
    checker.locator("h1", has_text="Verify a claim").wait_for(timeout=120_000)
    expect(sidebar(checker).get_by_text("Bo Lind")).to_be_visible(timeout=60_000)
    assert sidebar(checker).get_by_text("Ana Ruiz").count() == 0
    run_single(checker)
    assert checker.get_by_text("Override the verdict").count() == 0

    run_single(editor)
    editor.get_by_text("Override the verdict").click()
    editor.get_by_role("textbox", name="Reason (required)").fill("the ferry study was retracted")
    editor.get_by_role("button", name="Record my verdict").click()
    editor.get_by_text("Recorded:").wait_for(timeout=60_000)
    expect(editor.get_by_text("by Ana Ruiz").first).to_be_visible()
    screenshot(editor, "sign-in-editor-override")

    sidebar(checker).get_by_role("button", name="Sign out", exact=True).click()
    checker.get_by_text("You have signed out").wait_for(timeout=60_000)
    # the page drawn before sign-out fades out and goes when Streamlit's run ends, a moment after the message shows
    expect(checker.locator("textarea")).to_have_count(0, timeout=30_000)
    screenshot(checker, "sign-in-signed-out")
    checker.reload()
    checker.get_by_role("textbox", name="User name").wait_for(timeout=120_000)
    assert "/desk/sign-in" in checker.url
    editor.reload()  # the other person is still signed in
    expect(sidebar(editor).get_by_text("Ana Ruiz")).to_be_visible(timeout=120_000)
    editor.context.close()
    checker.context.close()


def test_a_wrong_password_is_refused_plainly(browser, desk_url: str) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context()
    page = context.new_page()
    page.goto(desk_url)
    page.get_by_role("textbox", name="User name").fill("ana")
    page.get_by_role("textbox", name="Password").fill("not it")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Unknown user name or wrong password.").wait_for(timeout=60_000)
    expect(page.get_by_role("textbox", name="User name")).to_have_value("ana")
    expect(page.locator("textarea")).to_have_count(0, timeout=30_000)
    context.close()


def test_sign_out_everywhere_ends_the_persons_other_browsers(browser, desk_url: str) -> None:  # type: ignore[no-untyped-def]
    laptop = signed_in(browser, desk_url, "ana")
    phone = signed_in(browser, desk_url, "ana")
    checker = signed_in(browser, desk_url, "bo")
    sidebar(laptop).get_by_role("button", name="Sign out everywhere").click()
    laptop.get_by_text("You have signed out everywhere").wait_for(timeout=60_000)
    screenshot(laptop, "sign-in-signed-out-everywhere")
    phone.reload()
    phone.get_by_role("textbox", name="User name").wait_for(timeout=120_000)
    assert "/desk/sign-in" in phone.url
    checker.reload()  # someone else's session is not touched
    expect(sidebar(checker).get_by_text("Bo Lind")).to_be_visible(timeout=120_000)
    for page in (laptop, phone, checker):
        page.context.close()
