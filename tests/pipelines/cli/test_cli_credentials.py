"""With a users file, the command line acts as an account only with its password: `override --by` a name alone records
nothing, a wrong password is refused plainly, a checker's right password is still no editor's, and an editor's records the
editor's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.cli.main import main
from pipelines.newsroom.access.sessions import SignInThrottle
from pipelines.run.runner import start_run
from pipelines.run.services import Services
from tests.fakes import fake_config, users_file


@pytest.fixture
def run_id(services: Services, demo_data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    handle = start_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services)
    list(handle.stream())
    assert services.store is not None
    SignInThrottle(services.store.engine).succeeded(["name:ana", "name:bo", "name:ed editor"])  # the shared data folder's counts
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(demo_data_dir))
    monkeypatch.setenv("DEBATEDESK_USERS_FILE", str(users_file(tmp_path / "users.toml")))
    return handle.run_id


def override(run_id: str, by: str) -> int:
    return main(["override", run_id, "--verdict", "REFUTES", "--by", by, "--note", "retracted"])


def overrides(services: Services, run_id: str) -> list[str]:
    assert services.store is not None
    return [e.by for e in services.store.events_of_type(run_id, "VerdictOverridden")]  # type: ignore[attr-defined]


def test_a_name_without_its_password_records_nothing(
    run_id: str, services: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEDESK_PASSWORD", "a guess")
    assert override(run_id, "Ed Editor") == 2 and override(run_id, "ana") == 2
    err = capsys.readouterr().err
    assert err.count("Unknown user name or wrong password. Nothing was done.") == 2 and "Traceback" not in err
    assert overrides(services, run_id) == []


def test_a_checkers_password_is_no_editors(
    run_id: str, services: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEDESK_PASSWORD", "pw-for-tests")
    assert override(run_id, "bo") == 2
    assert "only an editor may override verdicts; Bo Lind is signed in as a checker" in capsys.readouterr().err
    assert overrides(services, run_id) == []


def test_the_editors_password_records_the_editors_name_asked_for_at_the_terminal(
    run_id: str, services: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DEBATEDESK_PASSWORD", raising=False)
    asked: list[str] = []
    monkeypatch.setattr("getpass.getpass", lambda prompt="": asked.append(prompt) or "pw-for-tests")
    assert override(run_id, "ANA") == 0
    assert asked == ["Password for ANA: "] and "verdict set to REFUTED by Ana Ruiz" in capsys.readouterr().out
    assert overrides(services, run_id) == ["Ana Ruiz"]


def test_no_account_named_and_no_terminal_to_ask_at_are_refused_plainly(
    run_id: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["override", run_id, "--verdict", "REFUTES", "--by", " ", "--reason", "retracted"]) == 2
    assert "say who you are with --by ACCOUNT" in capsys.readouterr().err

    def no_terminal(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.delenv("DEBATEDESK_PASSWORD", raising=False)
    monkeypatch.setattr("getpass.getpass", no_terminal)
    assert override(run_id, "ana") == 2
    assert "no password given for ana: run this at a terminal, or set DEBATEDESK_PASSWORD" in capsys.readouterr().err


def test_without_a_users_file_the_name_given_is_recorded(run_id: str, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEBATEDESK_USERS_FILE")
    assert override(run_id, "Ed Editor") == 0
    assert overrides(services, run_id) == ["Ed Editor"]


def test_calibrating_on_a_shared_desk_asks_who_the_same_way(
    run_id: str, demo_data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rollback = ["calibrate", "--backend", "fake", "--rollback"]
    monkeypatch.setenv("DEBATEDESK_PASSWORD", "a guess")
    assert main([*rollback, "--by", "ana"]) == 2
    assert "Unknown user name or wrong password. Nothing was done." in capsys.readouterr().err
    monkeypatch.setenv("DEBATEDESK_PASSWORD", "pw-for-tests")
    assert main([*rollback, "--by", "bo"]) == 2
    assert "only an editor may calibrate models; Bo Lind is signed in as a checker" in capsys.readouterr().err
    assert main(rollback) == 2 and "say who you are with --by ACCOUNT" in capsys.readouterr().err
    assert main([*rollback, "--by", "ana"]) == 2  # the editor is let through, to be told there is nothing to roll back to
    assert "already uses the shipped calibration (or none): there is nothing earlier to go back to" in capsys.readouterr().err
    assert main(["calibrate", "--backend", "fake", "--list"]) == 0, "listing is anyone's"
