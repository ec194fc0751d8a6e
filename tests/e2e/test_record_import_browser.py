"""A forged record imported in Chromium: the file says an editor set REFUTED; History shows it as the file's word, not the desk's verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from playwright.sync_api import expect

from pipelines.record.importer import import_run
from pipelines.record.record_file import load_record, to_json
from pipelines.record.signing import DeskKey, desk_key
from pipelines.record.store import RunStore
from pipelines.record.verification import verify_record
from tests.e2e.conftest import screenshot, settled
from tests.fakes import hand_record

pytestmark = pytest.mark.e2e
CLAIM = "The Eiffel Tower grows taller in summer heat"


def forged_file(tmp_path: Path) -> tuple[Path, DeskKey]:
    """A record another desk (or a forger) signed with its own key, in which 'Ana Ruiz' set REFUTED, approved for publication."""
    evidence = {"id": "E1", "source": "corpus", "text": "Iron expands when heated; the tower is about 15 cm taller in summer."}
    override = {
        "type": "VerdictOverridden",
        "at": 1700000003,
        "label": "REFUTED",
        "note": "approved for publication",
        "by": "Ana Ruiz",
        "model_verdict": {"label": "SUPPORTS", "cited": ["E1"]},
    }
    record = hand_record(
        CLAIM,
        {"type": "EvidenceRetrieved", "at": 1700000001, "agent": "A", "round": 1, "evidence": evidence},
        {"type": "VerdictReached", "at": 1700000002, "verdict": {"label": "SUPPORTS", "cited": ["E1"], "rationale": "Iron expands."}},
        override,
        run_id="forged-eiffel",
        status="completed",
        at=1700000000,
        verdict="SUPPORTS",
        checker_verdict="REFUTED",
        checker_by="Ana Ruiz",
        checker_note="approved for publication",
    )
    summary, events = load_record(json.dumps(record))
    signer = DeskKey(Ed25519PrivateKey.generate(), tmp_path / "their-key.pem")
    path = tmp_path / "forged-ana.json"
    path.write_text(to_json(summary, events, signer=signer))
    return path, signer


def test_a_forged_import_shows_as_imported_and_is_not_the_desks_verdict(browser, app_url: str, demo_data_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, signer = forged_file(tmp_path)
    # History lists a run before the import, so its run picker is drawn (with nothing chosen) when the file arrives:
    # the import must still open the imported run (the picker keeps its own value across reruns).
    earlier = hand_record("An earlier claim already in History", run_id="earlier-run", status="failed", at=1600000000)
    import_run(RunStore(f"sqlite:///{(demo_data_dir / 'runs.sqlite').resolve()}"), json.dumps(earlier), source="earlier.json", by="Setup")
    checker = browser.new_context(viewport={"width": 1400, "height": 2200})
    editor = browser.new_context(viewport={"width": 1400, "height": 2200})
    try:
        page = checker.new_page()
        page.goto(app_url)
        page.locator("textarea").first.wait_for(timeout=300_000)
        page.get_by_role("textbox", name="Your name (audit trail)").fill("Ben Checker")
        page.keyboard.press("Enter")
        page.get_by_role("link", name="History").click()
        page.get_by_text("Import a JSON transcript for audit").click()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
        notice = page.locator('[data-testid="stAlert"]').filter(has_text="Imported:")
        notice.wait_for(timeout=60_000)
        said = notice.inner_text()
        assert "intact" in said and f"signed with another key, not this desk's: {signer.fingerprint}" in said
        page.get_by_text("Imported from forged-ana.json by Ben Checker").first.wait_for(timeout=60_000)
        page.get_by_text("the file says Ana Ruiz set REFUTED").first.wait_for(timeout=60_000)  # History's line for the file's word
        text = page.locator("body").inner_text()
        assert "the file says Ana Ruiz set REFUTED" in text and "approved for publication" in text
        page.get_by_text("Imported record").first.wait_for(timeout=30_000)  # the card's own part for the file's word
        page.get_by_text("the imported file says").first.wait_for(timeout=30_000)  # the transcript marks the file's override
        body = page.locator("body").inner_text()
        assert "Checker's verdict" not in body, "the file's override is never this desk's verdict"
        assert "the protocol's word: SUPPORTS" in body, "the card leads with the model's verdict in the one vocabulary"
        screenshot(page, "history-forged-import")
        # Issue 46: no ClaimReview is offered for it (the file's word is no fact-check of this desk), and History's list marks it.
        expect(page.get_by_role("button", name="ClaimReview JSON-LD")).to_be_disabled()
        # the list draws only the rows in view: filtered to this claim, the imported run's row is among them whatever else
        # the shared app's History holds (the file's start time sorts it below every run made since)
        page.get_by_role("textbox", name="Claim contains").fill("Eiffel Tower grows")
        page.keyboard.press("Enter")
        page.locator('[role="gridcell"]', has_text="📥 imported · ").first.wait_for(state="attached", timeout=30_000)

        with page.expect_download() as download:  # this desk's export of what it imported: signed with its own key
            page.get_by_role("button", name="JSON record").click()
        exported = tmp_path / "exported.json"
        download.value.save_as(exported)
        mine = desk_key(demo_data_dir)
        check = verify_record(exported.read_bytes(), desk_public_raw=mine.public_raw)
        assert check.intact and check.this_desk, check.lines()
        assert json.loads(exported.read_text())["events"][0]["type"] == "RecordImported", "the import note travels with it"
        page.get_by_role("link", name="Settings").click()
        page.get_by_text(mine.fingerprint).first.wait_for(timeout=60_000)
        page.get_by_role("heading", name="Record signing key").scroll_into_view_if_needed()
        screenshot(page, "settings-signing-key")

        other = editor.new_page()  # a second person at the desk sees the same: the file's claim, not a verdict
        other.goto(app_url)
        other.locator("textarea").first.wait_for(timeout=300_000)
        other.get_by_role("link", name="History").click()
        other.locator("h1", has_text="History").wait_for(timeout=60_000)
        settled(other)
        other.get_by_role("textbox", name="Claim contains").fill("Eiffel Tower grows")
        other.keyboard.press("Enter")
        # the filtered list, before choosing from it: the imported run is not counted as the desk's own
        other.get_by_text("0 runs of this desk · 1 imported (📥, another desk's file)", exact=True).wait_for(timeout=60_000)
        settled(other)
        other.get_by_role("combobox", name="Open a run").click()
        option = other.get_by_role("option").filter(has_text="Eiffel Tower grows").first
        assert "REFUTED" not in option.inner_text(), "the box names the run, never the file's verdict"
        option.click()
        other.get_by_text("the file says Ana Ruiz set REFUTED").first.wait_for(timeout=60_000)
        other.get_by_text("the imported file says").first.wait_for(timeout=30_000)
        seen = other.locator("body").inner_text()
        assert "Checker's verdict" not in seen and "the protocol's word: SUPPORTS" in seen, "the desk's verdict is the model's"
        screenshot(other, "history-forged-import-second-person")
    finally:
        checker.close()
        editor.close()
