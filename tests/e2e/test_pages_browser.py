"""The running app in Chromium: one title per page in the navigation, the heading and the tab; no Deploy button."""

import pytest

from components.pages import PAGES, tab_title
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.e2e


def test_every_page_has_one_title_and_no_deploy_button(page) -> None:  # type: ignore[no-untyped-def]
    for info in PAGES:
        page.locator('[data-testid="stSidebarNav"]').get_by_text(info.title, exact=True).click()
        page.locator("h1", has_text=info.title).wait_for(timeout=120_000)
        page.wait_for_function("title => document.title === title", arg=tab_title(info), timeout=30_000)
        assert page.get_by_role("button", name="Deploy").count() == 0
    screenshot(page, "pages-titles")
