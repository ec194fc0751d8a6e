"""Signed exports and imports kept as imported: whose key signed a record, where it was altered, and a forged override that stays the file's word."""

from __future__ import annotations

import csv
import io
import json
import re
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pipelines.cli.main import main
from pipelines.core.events import RecordImported, VerdictOverridden, dump_event
from pipelines.record import chain
from pipelines.record.digest import digest
from pipelines.record.export import export_run, to_claimreview, to_markdown
from pipelines.record.importer import import_run
from pipelines.record.record_file import to_json
from pipelines.record.signing import KEY_FILE, DeskKey, desk_key, existing_desk_key
from pipelines.record.store import RunFilter, RunStore
from pipelines.record.verdict_card import verdict_card
from pipelines.record.verification import verify_record
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.step_gate import override_verdict
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def run(services: Services) -> tuple[RunStore, str]:
    """A completed run on the fake backend, stored."""
    services.chat_override = FakeChatModel()
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    assert services.store is not None
    return services.store, events[0].run_id  # type: ignore[attr-defined]


def exported(store: RunStore, run_id: str, signer: DeskKey | None) -> dict:  # type: ignore[type-arg]
    summary = store.get_run(run_id)
    assert summary is not None
    return json.loads(to_json(summary, store.events(run_id), signer=signer, stored_chain=store.stored_chain(run_id).describe()))


def other_key(tmp_path: Path) -> DeskKey:
    return DeskKey(Ed25519PrivateKey.generate(), tmp_path / "elsewhere.pem")


# --- the desk's key ------------------------------------------------------------------------------------------


def test_the_desk_key_is_made_once_with_0600_and_kept(tmp_path: Path) -> None:
    assert existing_desk_key(tmp_path / "data") is None, "checking a record never makes a key"
    key = desk_key(tmp_path / "data")
    path = tmp_path / "data" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and b"PRIVATE KEY" in path.read_bytes()
    assert key.fingerprint.startswith("SHA256:") and len(key.public_raw) == 32
    assert desk_key(tmp_path / "data").fingerprint == key.fingerprint == existing_desk_key(tmp_path / "data").fingerprint  # type: ignore[union-attr]


def test_a_key_folder_that_cannot_be_written_is_said_plainly(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the data folder should be")
    with pytest.raises(Exception, match="cannot make the desk's signing key in .*make the data folder .* writable"):
        desk_key(blocked / "data")


# --- verify-record ------------------------------------------------------------------------------------------


def test_an_export_signed_here_is_intact_and_named_as_this_desks(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    key = desk_key(tmp_path)
    record = exported(store, run_id, key)
    assert record["schema_version"] == 2 and record["signature"]["fingerprint"] == key.fingerprint
    assert record["chain"]["head"] == store.stored_chain(run_id).head, "the export's chain is the store's"
    assert record["chain"]["stored"] == f"intact: {len(record['events'])} events chained"
    check = verify_record(json.dumps(record), desk_public_raw=key.public_raw)
    assert check.intact and check.this_desk and check.status == "intact"
    assert check.summary() == f"intact · signed with this desk's key ({key.fingerprint})"


def test_a_record_signed_by_another_key_is_named_as_such(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    mine, theirs = desk_key(tmp_path), other_key(tmp_path)
    check = verify_record(json.dumps(exported(store, run_id, theirs)), desk_public_raw=mine.public_raw)
    assert check.intact and not check.this_desk and check.signer == theirs.fingerprint != mine.fingerprint
    assert f"signed with another key, not this desk's: {theirs.fingerprint}" in check.summary()


def test_a_key_swapped_in_the_file_does_not_pass_for_this_desks(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    mine, theirs = desk_key(tmp_path), other_key(tmp_path)
    record = exported(store, run_id, theirs)
    record["signature"]["public_key"], record["signature"]["fingerprint"] = mine.public_b64, mine.fingerprint  # claims to be ours
    check = verify_record(json.dumps(record), desk_public_raw=mine.public_raw)
    assert not check.intact and check.status == "altered" and not check.signature_valid


def _verdict_index(record: dict) -> int:  # type: ignore[type-arg]
    return next(i for i, e in enumerate(record["events"]) if e["type"] == "VerdictReached")


@pytest.mark.parametrize("how", ["changed", "removed", "reordered", "inserted"])
def test_a_tampered_export_says_which_event_and_how(run: tuple[RunStore, str], tmp_path: Path, how: str) -> None:
    store, run_id = run
    key = desk_key(tmp_path)
    record = exported(store, run_id, key)
    events = record["events"]
    i = _verdict_index(record)
    if how == "changed":
        events[i]["verdict"]["label"] = "REFUTES"
        expected = [chain.Alteration("changed", i, i)]
    elif how == "removed":
        del events[2]
        expected = [chain.Alteration("removed", 2, None)]
    elif how == "reordered":
        events.insert(1, events.pop(i))
        expected = [chain.Alteration("reordered", i, 1)]
    else:
        events.insert(3, dump_event(VerdictOverridden(label="REFUTED", note="approved for publication", by="Ana Ruiz")))
        expected = [chain.Alteration("inserted", None, 3)]
    check = verify_record(json.dumps(record), desk_public_raw=key.public_raw)
    assert not check.intact and check.status == "altered" and list(check.alterations) == expected
    assert check.signature_valid, "the signature still holds over the chain: it is the events that departed from it"
    assert check.summary().startswith(f"ALTERED: {expected[0].describe()}")


def test_a_rewritten_chain_breaks_the_signature(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    key = desk_key(tmp_path)
    record = exported(store, run_id, key)
    record["events"][_verdict_index(record)]["verdict"]["label"] = "REFUTES"  # and the chain recomputed to match
    record["chain"]["event_digests"] = [chain.event_digest(e) for e in record["events"]]
    record["chain"]["links"] = chain.links(record["events"])
    record["chain"]["head"] = record["chain"]["links"][-1]
    check = verify_record(json.dumps(record), desk_public_raw=key.public_raw)
    assert check.status == "altered" and not check.signature_valid and check.alterations == ()
    assert "the signature does not match" in check.summary()


def test_a_changed_run_row_breaks_the_signature(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    key = desk_key(tmp_path)
    record = exported(store, run_id, key)
    record["run"]["checker_by"] = "Ana Ruiz"
    assert verify_record(json.dumps(record), desk_public_raw=key.public_raw).status == "altered"


def test_an_unsigned_old_record_is_not_chained_rather_than_broken(run: tuple[RunStore, str]) -> None:
    store, run_id = run
    record = exported(store, run_id, None)
    record.pop("chain")
    record["schema_version"] = 1
    check = verify_record(json.dumps(record))
    assert check.status == "not chained" and not check.intact and check.alterations == ()
    assert check.summary() == "not chained (exported before chaining): nothing in it can be checked"


def test_verify_record_on_the_command_line(run: tuple[RunStore, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id = run
    data = tmp_path / "data"
    key = desk_key(data)
    record = exported(store, run_id, key)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record))
    record["events"][_verdict_index(record)]["verdict"]["label"] = "REFUTES"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DEBATEDESK_DATA_DIR", str(data))
        assert main(["verify-record", str(good)]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"record: intact · signed with this desk's key ({key.fingerprint})")
        assert main(["verify-record", str(bad)]) == 1
        out = capsys.readouterr().out
        i = _verdict_index(record)
        assert out.startswith(f"record: ALTERED: event {i} was changed") and f"  - event {i} was changed" in out
        assert main(["verify-record", str(good), "--expect", "SHA256:someone-else"]) == 3
        assert "expected a signature by SHA256:someone-else" in capsys.readouterr().out


def test_verify_record_is_strict_by_default(run: tuple[RunStore, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 46: an auditor's script trusting the exit status passed a record signed with another key, or not signed at all."""
    store, run_id = run
    data = tmp_path / "data"
    mine, theirs = desk_key(data), other_key(tmp_path)
    signed_elsewhere = tmp_path / "elsewhere.json"
    signed_elsewhere.write_text(json.dumps(exported(store, run_id, theirs)))
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps(exported(store, run_id, None)))
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps(exported(store, run_id, mine)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DEBATEDESK_DATA_DIR", str(data))
        assert main(["verify-record", str(signed_elsewhere)]) == 3
        assert f"NOT TRUSTED: intact, but signed with {theirs.fingerprint}" in capsys.readouterr().out
        assert main(["verify-record", str(unsigned)]) == 4
        assert "NOT TRUSTED: the record is not signed" in capsys.readouterr().out
        assert main(["verify-record", str(ours)]) == 0
        assert main(["verify-record", str(signed_elsewhere), "--expect", theirs.fingerprint]) == 0
        assert main(["verify-record", str(ours), "--expect", theirs.fingerprint]) == 3  # --expect names the one key: ours is not it
        capsys.readouterr()

        keys = tmp_path / "trusted-keys.txt"
        keys.write_text(f"# keys this newsroom's auditor trusts\n\n{theirs.fingerprint} Partner desk\n")
        assert main(["verify-record", str(signed_elsewhere), "--trusted-keys", str(keys)]) == 0
        assert f"trusted: intact and signed with a trusted key (Partner desk): {theirs.fingerprint}" in capsys.readouterr().out
        keys.write_text(f"{theirs.public_b64}\n")  # the public key as a record carries it works too
        assert main(["verify-record", str(signed_elsewhere), "--trusted-keys", str(keys)]) == 0
        assert main(["verify-record", str(unsigned), "--trusted-keys", str(keys)]) == 4
        keys.write_text("not a key\n")
        assert main(["verify-record", str(signed_elsewhere), "--trusted-keys", str(keys)]) == 2
        assert "line 1" in capsys.readouterr().err


def test_verify_record_refuses_a_file_over_the_limit_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.record import verification

    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.write(b'{"events": [' + b"{}," * 1_000_000 + b"{}]}")  # 3 MB
    monkeypatch.setenv("DEBATEDESK_MAX_RECORD_MB", "1")

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file over the limit was read and checked")

    monkeypatch.setattr(verification, "verify_record", never)
    assert main(["verify-record", str(big)]) == 5
    out = capsys.readouterr().out
    assert "is 3.0 MB; the limit is 1 MB" in out and "DEBATEDESK_MAX_RECORD_MB" in out


# --- imports kept as imported ---------------------------------------------------------------------------------


def forged_record(store: RunStore, run_id: str, signer: DeskKey) -> str:
    """The run as another desk (or a forger) would send it: 'Ana Ruiz' set REFUTED, approved for publication."""
    summary = store.get_run(run_id)
    assert summary is not None
    events = [*store.events(run_id), VerdictOverridden(label="REFUTED", note="approved for publication", by="Ana Ruiz")]
    record = json.loads(to_json(summary, events, signer=None))
    record["run"].update(checker_verdict="REFUTED", checker_by="Ana Ruiz", checker_note="approved for publication")
    record["run"].update(checker_at=events[-1].at, final_verdict="REFUTED", id="forged-1")
    record["events"][0]["run_id"] = "forged-1"
    record["chain"]["event_digests"] = [chain.event_digest(e) for e in record["events"]]
    record["chain"]["links"] = chain.links(record["events"])
    record["chain"]["head"] = record["chain"]["links"][-1]
    return to_signed(record, signer)


def to_signed(record: dict, signer: DeskKey) -> str:  # type: ignore[type-arg]
    from pipelines.record.verification import signed_part

    record["signature"] = {
        "algorithm": "ed25519",
        "public_key": signer.public_b64,
        "fingerprint": signer.fingerprint,
        "value": signer.sign(signed_part(record)),
    }
    return json.dumps(record)


def test_a_forged_editor_override_is_imported_as_the_files_word_and_changes_no_verdict(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    mine, theirs = desk_key(tmp_path), other_key(tmp_path)
    done = import_run(store, forged_record(store, run_id, theirs), source="forged.json", by="Ben Checker", desk=mine)
    summary = done.summary
    assert done.new and done.check.intact and not done.check.this_desk
    assert summary.checker_verdict is None and summary.checker_by is None, "the row holds no checker's verdict from a file"
    assert summary.final_verdict == summary.verdict and summary.origin == "imported from forged.json"
    events = store.events(summary.id)
    marker = events[0]
    assert isinstance(marker, RecordImported) and (marker.by, marker.source, marker.signer) == (
        "Ben Checker",
        "forged.json",
        theirs.fingerprint,
    )
    assert "another key, not this desk's" in marker.check
    read = digest(events)
    assert read.override is None and [o.by for o in read.imported_overrides] == ["Ana Ruiz"]
    assert read.interventions == [], "this desk's audit trail is empty: the file's is kept apart"
    card = verdict_card(read)
    assert card is not None and card.checker is None and card.label == card.model.label  # type: ignore[union-attr]
    assert [a.by for a in card.imported_audit] == ["Ana Ruiz"] and card.audit == ()
    doc = to_claimreview(summary, events)
    assert doc["reviewRating"]["name"] != "REFUTED" and "editor" not in doc, "ClaimReview publishes only this desk's verdict"
    refuted = [r.id for r in store.list_runs(limit=10_000, where=RunFilter(verdicts=("REFUTED",)))]
    assert summary.id not in refuted, "History's filter finds the desk's verdict, not the file's"
    row = next(csv.DictReader(io.StringIO(export_run(summary, events, "csv"))))
    assert row["checker_verdict"] == "" and row["audit_trail"] == ""
    assert row["imported"] == ("imported from forged.json by Ben Checker; the file says Ana Ruiz set REFUTED (“approved for publication”)")
    assert "Ana Ruiz" in row["imported_audit_trail"]
    report = to_markdown(summary, events)
    assert "Checker's verdict" not in report and "## Imported record (not this desk's audit trail)" in report
    assert re.search(r"Imported from forged\\?\.json by Ben Checker on .* The file.s check: intact", report), report


def test_this_desks_own_override_after_an_import_is_its_verdict(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    done = import_run(store, forged_record(store, run_id, other_key(tmp_path)), source="forged.json", by="Ben", desk=desk_key(tmp_path))
    override_verdict(store, done.summary.id, "SUPPORTED", "read the trial myself", "Ed Editor")
    stored = store.get_run(done.summary.id)
    assert stored is not None and (stored.checker_verdict, stored.checker_by) == ("SUPPORTED", "Ed Editor")
    read = digest(store.events(done.summary.id))
    assert read.override is not None and read.override.by == "Ed Editor" and [o.by for o in read.imported_overrides] == ["Ana Ruiz"]
    assert store.stored_chain(done.summary.id).intact


def test_an_altered_import_is_kept_with_what_the_check_found(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    key = desk_key(tmp_path)
    record = exported(store, run_id, key)
    record["run"]["id"] = record["events"][0]["run_id"] = "altered-1"  # a copy: the original is already here
    i = _verdict_index(record)
    record["events"][i]["verdict"]["rationale"] = "edited after export"
    done = import_run(store, json.dumps(record), source="altered.json", by="Ben", desk=key)
    marker = store.events(done.summary.id)[0]
    assert isinstance(marker, RecordImported) and not marker.intact and marker.check.startswith("ALTERED: event")
    assert not done.check.intact


def test_an_import_needs_a_person(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    with pytest.raises(ValueError, match="say who imports the record"):
        import_run(store, forged_record(store, run_id, other_key(tmp_path)), source="x.json", by="  ")


def test_an_import_into_a_store_that_went_away_is_refused_plainly_and_stores_nothing(run: tuple[RunStore, str], tmp_path: Path) -> None:
    store, run_id = run
    record = forged_record(store, run_id, other_key(tmp_path))
    gone = RunStore(f"sqlite:///{tmp_path / 'gone.sqlite'}")
    (tmp_path / "gone.sqlite").unlink()
    (tmp_path / "gone.sqlite").mkdir()  # the database file is now a folder: every write fails
    gone.engine.dispose()
    with pytest.raises(Exception, match="the run store could not take the record .*nothing was imported"):
        import_run(gone, record, source="forged.json", by="Ben")
