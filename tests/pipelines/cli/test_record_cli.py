"""The CLI's record commands in-process: an override without a reason is refused plainly; an import says what the check found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.cli.main import main
from pipelines.core.config import AppSettings
from pipelines.core.events import RecordImported
from pipelines.record.record_file import to_json
from pipelines.record.signing import desk_key
from pipelines.record.store import RunStore
from pipelines.record.verdict_card import COMMON_LABELS, common_label
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config


@pytest.fixture
def stored(services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RunStore, str, Path]:
    """A completed run in the store the CLI opens (the data folder's SQLite file)."""
    data = tmp_path / "desk"
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(data))
    data.mkdir()
    store = RunStore(AppSettings().sqlite_url)
    services.store = store
    services.chat_override = FakeChatModel()
    events = list(stream_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services))
    return store, events[0].run_id, data  # type: ignore[attr-defined]


def test_an_override_without_a_reason_is_refused_plainly(stored: tuple[RunStore, str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id, _ = stored
    with pytest.raises(SystemExit) as info:
        main(["override", run_id, "--verdict", "REFUTED", "--by", "Ana"])
    assert info.value.code == 2 and "the following arguments are required: --reason" in capsys.readouterr().err
    assert main(["override", run_id, "--verdict", "REFUTED", "--by", "Ana", "--reason", "  "]) == 2
    assert "error: give a reason for your verdict" in capsys.readouterr().err
    assert store.events_of_type(run_id, "VerdictOverridden") == []
    assert main(["override", run_id, "--verdict", "refutes", "--by", "Ana", "--reason", "the trial was retracted"]) == 0
    assert "verdict set to REFUTED by Ana" in capsys.readouterr().out


def test_import_names_the_importer_and_says_what_the_check_found(
    stored: tuple[RunStore, str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, run_id, data = stored
    record = json.loads(to_json(store.get_run(run_id), store.events(run_id), signer=desk_key(data)))  # type: ignore[arg-type]
    record["run"]["id"] = record["events"][0]["run_id"] = "copy-1"  # the run id is in the signed part: the signature breaks
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(record))
    assert main(["import", str(path), "--by", "Ben"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("the record is ALTERED: event 0 was changed") and "imported: copy-1" in out
    marker = store.events("copy-1")[0]
    assert isinstance(marker, RecordImported) and marker.by == "Ben" and marker.source == "copy.json" and not marker.intact


def test_runs_lists_and_filters_in_the_one_vocabulary(stored: tuple[RunStore, str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id, _ = stored
    own = store.get_run(run_id).verdict  # type: ignore[union-attr]
    assert own is not None
    common = common_label(own)
    assert main(["runs", "--verdict", common]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(run_id))
    assert f"\t{common}" in line and (own == common or f"(the protocol's word: {own})" in line)
    other = next(label for label in COMMON_LABELS if label != common)
    assert main(["runs", "--verdict", other]) == 0 and run_id not in capsys.readouterr().out


def test_export_gives_a_claimreview_only_for_a_run_this_desk_reviewed(
    stored: tuple[RunStore, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """History's button follows this rule; the command line rated any run, unreviewed ones included, as a fact-check."""
    _, run_id, _ = stored
    assert main(["export", run_id, "--format", "claimreview"]) == 2
    assert "nobody on this desk has reviewed this run's verdict" in capsys.readouterr().err
    assert main(["override", run_id, "--verdict", "REFUTED", "--by", "Ana", "--reason", "the trial was retracted"]) == 0
    capsys.readouterr()
    assert main(["export", run_id, "--format", "claimreview"]) == 0
    assert json.loads(capsys.readouterr().out)["reviewRating"]["name"] == "REFUTED"
