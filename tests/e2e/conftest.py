"""Start the real app on a free loopback port (fake backend, web off) and drive it with Debian's Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.environment import fake_app_environment, free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
RESULTS = ROOT / "test-results"
SERVER_LOGS: dict[str, Path] = {}  # each app's address -> its log, shown when a test on it fails


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[str]:
    yield from serve_app(tmp_path_factory, demo_data_dir)


def serve_app(tmp_path_factory: pytest.TempPathFactory, data_dir: Path, **settings: str) -> Iterator[str]:
    """The app on a free loopback port, on the fake backend with web search off, and ``settings`` as DEBATEDESK_* variables."""
    port = free_port()
    env = fake_app_environment(data_dir, **settings)  # the shell's DEBATEDESK_* settings must not reach the app under test
    log_path = tmp_path_factory.mktemp("app") / "streamlit.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "server.py", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the app did not start within 300 s")
    SERVER_LOGS[url] = log_path
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def signed_in(browser, url: str, username: str):  # type: ignore[no-untyped-def]
    """A new browser context (a person of their own) signed in at ``url`` as ``username`` (tests.fakes.users_file's password)."""
    page = browser.new_context(viewport={"width": 1400, "height": 1800}).new_page()
    page.goto(url)
    page.get_by_role("textbox", name="User name").wait_for(timeout=300_000)
    page.get_by_role("textbox", name="User name").fill(username)
    page.get_by_role("textbox", name="Password").fill("pw-for-tests")
    page.get_by_role("button", name="Sign in").click()
    page.locator("h1").first.wait_for(timeout=120_000)
    expect(page.locator("h1").first).not_to_have_text("⚖️ Sign in to DebateDesk", timeout=120_000)
    return page


@pytest.fixture(scope="module")  # not session: Playwright's loop must be gone before asyncio tests run
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, app_url: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.goto(app_url)
    page.locator("textarea").first.wait_for(timeout=300_000)  # the first load builds the index
    yield page
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """A browser test that fails says what each of its pages showed: its messages, a screenshot, and the end of the app's log.

    A wait that times out names only the text it waited for; this is what was there instead. A test that drives several
    people (a browser context each) is reported page by page.
    """
    report: pytest.TestReport = yield
    if report.when != "call" or not report.failed:
        return report
    funcargs = getattr(item, "funcargs", {})
    pages = [funcargs["page"]] if funcargs.get("page") is not None else []
    with suppress(Exception):  # the browser may be gone: the report must still be made
        pages += [p for context in funcargs["browser"].contexts for p in context.pages if p not in pages]
    logs: set[Path] = set()
    for number, page in enumerate(pages, 1):
        with suppress(Exception):  # the page may be gone
            shot = screenshot(page, f"failed-{item.name}" + (f"-{number}" if number > 1 else ""))
            alerts = page.locator('[data-testid="stAlert"], [data-testid="stException"]').all_inner_texts()
            report.sections.append((f"page {number} when the test failed", f"{page.url}\nscreenshot: {shot}\nmessages: {alerts}"))
        log = next((path for url, path in SERVER_LOGS.items() if page.url.startswith(url)), None)
        if log is not None:
            logs.add(log)
    for log in sorted(logs):
        if log.exists():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-60:]
            report.sections.append(("end of the app's log", "\n".join(tail)))
    return report


def screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def open_in_history(page, claim_contains: str) -> None:  # type: ignore[no-untyped-def]
    """Go to History, filter by part of the claim, and open the first run listed."""
    page.get_by_role("link", name="History").click()
    page.get_by_role("textbox", name="Claim contains").fill(claim_contains)
    page.keyboard.press("Enter")
    pick_option(page, "Open a run", "")


def pick_option(page, combobox: str, option: str | re.Pattern[str]) -> None:  # type: ignore[no-untyped-def]
    """In the select box named ``combobox``, choose the first option whose text contains ``option`` (the first of all when empty).

    Waits for the page's run to end first (a choice made mid-run races its redraw, and opening an expander may rerun),
    types the text to narrow the list (a long list draws only the options near the current one), and tries again when a
    redraw closed the list under the click.
    """
    chooser = page.get_by_role("combobox", name=combobox)
    chooser.wait_for(timeout=30_000)
    for attempt in range(3):
        settled(page)
        try:
            chooser.click()
            if isinstance(option, str) and option:
                chooser.fill(option)
            page.get_by_role("option").filter(has_text=option).first.click(timeout=15_000)
            break
        except PlaywrightTimeoutError:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    settled(page)


def start_claim(page, claim: str, protocol: str = "", *, name: str = "", step_mode: bool = False) -> None:  # type: ignore[no-untyped-def]
    """On Verify: the checker's name, step mode and the protocol (its option's text) when given, then the claim, then Verify."""
    if name:
        page.get_by_role("textbox", name="Your name (audit trail)").fill(name)
        page.keyboard.press("Enter")
    if step_mode:
        sidebar_toggle(page, "Step mode")
    if protocol:
        pick_option(page, "Protocol", protocol)
    page.locator("textarea").first.fill(claim)
    page.get_by_role("button", name="Verify").click()


def sidebar_toggle(page, label: str) -> None:  # type: ignore[no-untyped-def]
    """Click the sidebar's toggle called ``label`` (the landing text names step mode too, so a bare text match is ambiguous)."""
    page.locator('[data-testid="stSidebar"]').get_by_text(label, exact=True).click()


def settled(page, timeout: float = 120_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page's script has finished its run: a choice made mid-run races the run's own redraw."""
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=timeout)


def unfold(page, target, timeout: float = 120_000) -> None:  # type: ignore[no-untyped-def]
    """Click ``target``, an expander or tab that reruns the page, and wait until the run it starts has finished.

    ``settled`` alone can return before that run has started; text typed into a box the run then redraws is lost
    (the corrections test once withdrew a fact-check with "no reason given" that way).
    """
    target.click()
    run_over(page, timeout)


def run_over(page, timeout: float = 120_000) -> None:  # type: ignore[no-untyped-def]
    """After an action that reruns the page (a click, an upload): wait for that run to start, then to finish."""
    with suppress(PlaywrightTimeoutError):  # a quick run may be over before we look
        page.locator('[data-testid="stApp"]:not([data-test-script-state="notRunning"])').wait_for(timeout=3_000)
    settled(page, timeout)
