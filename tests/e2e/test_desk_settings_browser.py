"""In Chromium, two people at once on a shared desk: the editor changes a spend limit on Settings and saves it for the desk;
the checker, in another browser context, sees it (and is held to it) but has no way to change it."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, serve_app
from tests.e2e.test_settings_browser import nav
from tests.e2e.test_sign_in_browser import signed_in
from tests.fakes import users_file

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def desk_url(tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("desk-settings")
    users = users_file(folder / "users.toml")
    yield from serve_app(tmp_path_factory, demo_data_dir, users_file=str(users), database_url=f"sqlite:///{folder / 'runs.sqlite'}")


def test_the_editors_limit_holds_for_the_checker_who_cannot_change_it(browser, desk_url: str) -> None:  # type: ignore[no-untyped-def]
    editor = signed_in(browser, desk_url, "ana")
    checker = signed_in(browser, desk_url, "bo")  # both signed in at once, each in a browser context of their own

    nav(checker, "Settings")
    checker.get_by_text("Only an editor changes them").wait_for(timeout=60_000)
    assert checker.get_by_role("spinbutton", name="Calls per run").count() == 0
    assert checker.get_by_role("button", name="Save models, prices and limits for the whole desk").count() == 0

    nav(editor, "Settings")
    limit = editor.get_by_role("spinbutton", name="Calls per run")
    limit.fill("9")
    limit.press("Enter")
    expect(limit).to_have_value("9", timeout=30_000)
    editor.wait_for_timeout(1000)
    editor.get_by_role("button", name="Save models, prices and limits for the whole desk").click()
    editor.get_by_text("Saved for the whole desk: 1 change").wait_for(timeout=60_000)
    screenshot(editor, "desk-settings-editor")

    nav(checker, "Verify a claim")  # the checker's next page: the desk's limit, and the change in the audit list
    checker.locator('[data-testid="stSidebar"]').get_by_text("9 calls per run").wait_for(timeout=60_000)
    nav(checker, "Settings")
    checker.get_by_text("9 calls per run").first.wait_for(timeout=60_000)
    expect(checker.get_by_role("table").filter(has_text="Ana Ruiz").first).to_be_visible()
    assert checker.get_by_role("spinbutton", name="Calls per run").count() == 0
    screenshot(checker, "desk-settings-checker")
    editor.context.close()
    checker.context.close()
