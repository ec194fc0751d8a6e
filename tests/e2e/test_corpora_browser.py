"""In Chromium: upload a PDF and a saved web page into a new corpus; it shows at once; find and delete a document."""

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, settled
from tests.fakes import make_pdf

pytestmark = pytest.mark.e2e

HTML = b"""<html><head><title>Masks on buses</title></head><body><nav>Home</nav>
<article><p>Riders who wore masks fell ill less often.</p></article></body></html>"""


def frame_height(page, index: int) -> float:  # type: ignore[no-untyped-def]
    """Dataframes are drawn on a canvas: their size says how many rows they hold."""
    box = page.locator('[data-testid="stDataFrame"]').nth(index).bounding_box()
    assert box is not None
    return float(box["height"])


def delete_document(page, option: str) -> None:  # type: ignore[no-untyped-def]
    """Pick one document to delete, confirm, and press Delete.

    Each step waits for the page's run to end and the tick to show: under load a tick given while the page was still
    redrawing landed on the old copy of the box, and Delete then (rightly) said nothing was confirmed. The box must
    start unticked: after a deletion the browser once kept showing the last tick (the page now gives the box a new key).
    """
    settled(page)
    page.locator('[data-testid="stMultiSelect"]', has_text="Documents to delete").locator("input").click()
    page.get_by_role("option", name=option).click()
    page.keyboard.press("Escape")
    settled(page)
    confirm = page.get_by_role("checkbox", name="Yes, delete them from this corpus")
    expect(confirm).not_to_be_checked()
    page.get_by_text("Yes, delete them from this corpus").click()  # the box itself is hidden under Streamlit's drawn one
    expect(confirm).to_be_checked(timeout=30_000)
    settled(page)
    page.get_by_role("button", name="Delete", exact=True).click()


def upload_and_ingest(page, paths: list[Path]) -> None:  # type: ignore[no-untyped-def]
    """Choose the files, wait until the uploader lists each of them, then press Ingest.

    Pressing Ingest in the instant between choosing a file and its upload starting submits the form without it (the
    page then says to choose a file, and a wait for the report hangs): the uploader lists a file from the moment its
    upload starts, and Streamlit keeps the form's button disabled until every upload is done, which click waits for.
    """
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(paths)
    uploader = page.locator('[data-testid="stFileUploader"]')
    for path in paths:
        uploader.get_by_text(path.name, exact=True).wait_for(timeout=60_000)
    page.get_by_role("button", name="Ingest").click()


def wait_for_report(page, text: str, timeout: float) -> None:  # type: ignore[no-untyped-def]
    """Wait for the ingestion report; fail at once, with the page's reason, if the page refused the upload instead."""
    refused = page.get_by_text("Nothing was added")
    page.get_by_text(text).or_(refused).first.wait_for(timeout=timeout)
    assert refused.count() == 0, refused.first.inner_text()


def test_upload_pdf_and_html_then_delete_a_document(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "trial.pdf").write_bytes(make_pdf(["Surgical masks cut influenza in the trial."], title="Mask trial"))
    (tmp_path / "buses.html").write_bytes(HTML)
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Corpora", exact=True).click()
    page.locator("h1", has_text="Corpora").wait_for(timeout=120_000)
    before = frame_height(page, 0)

    name = page.get_by_role("textbox", name="Corpus name")
    name.fill("e2e-uploads")
    upload_and_ingest(page, [tmp_path / "trial.pdf", tmp_path / "buses.html"])
    wait_for_report(page, "e2e-uploads: 2 documents", timeout=120_000)
    # The overview has the new corpus's row without a reload. Its table is a new widget drawn after the report (under
    # load, more than a second later on CI once): wait for it to grow rather than look once.
    deadline = time.monotonic() + 30
    while frame_height(page, 0) <= before and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    assert frame_height(page, 0) > before
    expect(page.get_by_text("2 of 2 documents.")).to_be_visible()
    screenshot(page, "corpora-uploaded")

    page.get_by_role("textbox", name="Find documents").fill("buses")
    page.keyboard.press("Enter")
    page.get_by_text("1 of 2 documents.").wait_for(timeout=30_000)

    delete_document(page, "Masks on buses · buses")
    page.get_by_text("Deleted 1 document(s)").wait_for(timeout=60_000)
    expect(page.get_by_role("textbox", name="Find documents")).to_have_count(1, timeout=30_000)  # the rerun's stale copy gone
    page.get_by_role("textbox", name="Find documents").fill("")
    page.keyboard.press("Enter")
    page.get_by_text("1 of 1 documents.").wait_for(timeout=30_000)
    screenshot(page, "corpora-deleted")

    # The last document: the corpus goes too (and the shared test data folder is as it was).
    delete_document(page, "Mask trial · trial")
    page.get_by_text("the corpus is gone too").wait_for(timeout=60_000)


def test_a_long_ingestion_shows_its_progress(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One long document (600 passages): the bar counts them while they are embedded, then gives way to the report."""
    text = " ".join(f"Riders on bus line {i} wore masks in week {i % 52}." for i in range(1800))
    (tmp_path / "notes.jsonl").write_text(json.dumps({"id": "notes", "title": "Bus notes", "text": text}) + "\n", encoding="utf-8")
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Corpora", exact=True).click()
    page.locator("h1", has_text="Corpora").wait_for(timeout=120_000)

    page.get_by_role("textbox", name="Corpus name").fill("e2e-long")
    # Every text the bar shows is recorded as the page changes: it may come and go between two polls.
    page.evaluate(
        """() => { window.barTexts = [];
        new MutationObserver(() => { for (const bar of document.querySelectorAll('[data-testid="stProgress"]')) window.barTexts.push(bar.innerText); })
          .observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true}); }"""
    )
    upload_and_ingest(page, [tmp_path / "notes.jsonl"])
    wait_for_report(page, "e2e-long: 1 document,", timeout=300_000)

    shown = page.evaluate("() => window.barTexts")
    assert any("passages" in text for text in shown), shown
    expect(page.locator('[data-testid="stProgress"]')).to_have_count(0)  # gone once done
    screenshot(page, "corpora-ingested-long")

    delete_document(page, "Bus notes · notes")  # the shared test data folder is left as it was
    page.get_by_text("the corpus is gone too").wait_for(timeout=60_000)
