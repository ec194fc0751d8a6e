"""The running app in Chromium: the checker's name stays across pages and a reload; the Settings page's preset and its
connection test, which fails at once and says why when nothing serves the model."""

import socket
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, settled

pytestmark = pytest.mark.e2e


def nav(page, title: str) -> None:  # type: ignore[no-untyped-def]
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    page.locator("h1", has_text=title).wait_for(timeout=120_000)
    settled(page)  # a choice made while the page still runs races its redraw


def test_name_preset_and_a_connection_test_that_fails_fast(page) -> None:  # type: ignore[no-untyped-def]
    name = page.get_by_role("textbox", name="Your name (audit trail)")
    name.fill("Ana Ruiz")
    name.press("Enter")
    page.wait_for_timeout(1500)  # the name is kept by this browser's cookie, never in the address
    assert "checker" not in page.url and "Ana" not in page.url

    nav(page, "Settings")
    expect(page.get_by_role("textbox", name="Your name (audit trail)")).to_have_value("Ana Ruiz", timeout=60_000)
    page.locator('[data-testid="stSelectbox"]', has_text="Preset").locator("input, [role=combobox]").first.click()
    page.get_by_role("option", name="Local OpenAI-compatible server").click()
    # the preset's own caption shows once the page has redrawn with the choice: only then does Apply carry it
    page.get_by_text("A server on this machine that speaks the OpenAI API").wait_for(timeout=90_000)
    settled(page)
    page.get_by_role("button", name="Apply to every role").click()
    base_url = page.get_by_role("textbox", name="Base URL").first
    page.wait_for_function("() => [...document.querySelectorAll('input')].some(i => i.value.includes('localhost:11434'))", timeout=90_000)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_url.fill(f"http://127.0.0.1:{port}/v1")
    base_url.press("Enter")
    page.wait_for_timeout(1500)
    started = time.monotonic()
    page.get_by_role("button", name="Test connection").first.click()
    page.get_by_text("Nothing is listening at").wait_for(timeout=60_000)
    assert time.monotonic() - started < 10
    screenshot(page, "settings-connection-test")

    page.reload()  # a new session: the name comes back from this browser's cookie
    expect(page.get_by_role("textbox", name="Your name (audit trail)")).to_have_value("Ana Ruiz", timeout=120_000)
    nav(page, "Verify a claim")
    expect(page.get_by_role("textbox", name="Your name (audit trail)")).to_have_value("Ana Ruiz", timeout=60_000)
    page.locator('[data-testid="stSidebar"]').get_by_text("Settings: desk").wait_for(timeout=60_000)
    screenshot(page, "verify-calm-sidebar")
