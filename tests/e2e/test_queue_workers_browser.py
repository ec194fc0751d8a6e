"""In Chromium, a shared desk whose work runs on workers: a checker chooses two claims on the claims queue and presses
Check these; a worker in another process (``python -m pipelines worker``) runs them; the checker's page and an editor's, in
another browser, show their progress read from the store, by that worker, to the end; each run joined its claim.

Needs PostgreSQL (`.ci/run` starts one; DEBATEDESK_TEST_POSTGRES_URL names it): the queue is the desk's database.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, pick_option, run_over, screenshot, serve_app, settled, signed_in
from tests.environment import fake_app_environment
from tests.fakes import users_file
from tests.stores import POSTGRES_ENV, postgres_database

pytestmark = pytest.mark.e2e

CLAIMS = ["Masks reduce transmission of respiratory viruses on night trains", "Vaccines cause autism <b>in night trains</b>"]


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory, demo_data_dir: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The app on the desk's PostgreSQL with batches on workers, signed-in people, and one worker process beside it."""
    if not os.environ.get(POSTGRES_ENV):
        pytest.skip(f"no PostgreSQL server: set {POSTGRES_ENV} (`.ci/run` starts one)")
    with postgres_database() as url:
        users = users_file(tmp_path_factory.mktemp("desk") / "users.toml")
        env = fake_app_environment(demo_data_dir, database_url=url, fake_latency_s="0.5")  # latency: long enough to be seen running
        log = (tmp_path_factory.mktemp("worker") / "worker.log").open("w")
        worker = subprocess.Popen(
            [sys.executable, "-m", "pipelines", "worker", "--concurrency", "2"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            for app in serve_app(tmp_path_factory, demo_data_dir, database_url=url, batch_on_workers="true", users_file=str(users)):
                yield app, worker
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
            log.close()


def test_a_checker_submits_claims_from_the_queue_and_a_worker_in_another_process_checks_them(browser, desk) -> None:  # type: ignore[no-untyped-def]
    url, worker = desk
    bo = signed_in(browser, url, "bo")  # a checker: may start checks
    bo.get_by_role("link", name="Claims queue").click()
    bo.get_by_role("tab", name="➕ Add claims").click()
    bo.get_by_role("tab", name="📋 Paste a list").click()
    bo.get_by_role("textbox", name="Claims, one per line").fill("\n".join(CLAIMS))
    bo.get_by_role("button", name="Add these").click()
    bo.get_by_text("Added 2 claims").wait_for(timeout=60_000)
    bo.get_by_role("tab", name="📥 Queue").click()
    run_over(bo)
    for claim in CLAIMS:  # pick_option opens the list again when a redraw closes it under the click (CI once timed out)
        pick_option(bo, "Claims to check", claim[:40])
        bo.keyboard.press("Escape")
        settled(bo)
    bo.get_by_role("button", name="Check these").click()
    bo.get_by_text("2 claims submitted to the workers").wait_for(timeout=60_000)
    screenshot(bo, "queue-workers-submitted")

    # the editor, in another browser, watches the same submission from the store while the worker runs it
    ana = signed_in(browser, url, "ana")
    ana.get_by_role("link", name="Claims queue").click()
    watched = ana.get_by_role("combobox", name="Checks submitted from the queue")
    watched.wait_for(timeout=60_000)
    expect(watched).to_have_value(re.compile("2 claims · by Bo Lind$"))
    done = ana.get_by_text("2 of 2 completed").first
    done.wait_for(timeout=240_000)
    expect(ana.get_by_text("Done: 2 of 2 completed")).to_be_visible()
    frame = ana.locator('[data-testid="stDataFrame"]').last
    expect(frame).to_contain_text(f":{worker.pid}", timeout=30_000)  # by which worker: the other process, host:pid
    screenshot(ana, "queue-workers-done")
    bo.get_by_text("Done: 2 of 2 completed").wait_for(timeout=60_000)  # the checker's page follows it too

    # each run joined its claim: the claim shows its completed run
    ana.locator('[data-testid="stSelectbox"]', has_text="Open a claim").locator("input").click()
    ana.get_by_role("option").filter(has_text=CLAIMS[1][:40]).first.click()
    ana.get_by_role("heading", name=CLAIMS[1]).wait_for(timeout=60_000)  # the claim's words as text, not markup
    ana.get_by_text("Runs (1)").wait_for(timeout=60_000)
    expect(ana.get_by_text("· completed ·").first).to_be_visible()
    assert worker.poll() is None, "the worker is still up"
    bo.context.close()
    ana.context.close()
