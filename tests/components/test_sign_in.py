"""AppTest: a shared desk asks to sign in, records the signed-in name, and lets only an editor override a verdict;
without a users file nothing asks (the one-person desk of `make run`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import fake_app
from tests.fakes import users_file

CLAIM = "Masks reduce transmission of respiratory viruses on trams"


@pytest.fixture(scope="module")
def users_toml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return users_file(tmp_path_factory.mktemp("desk") / "users.toml")


def desk(monkeypatch: pytest.MonkeyPatch, data_dir: Path, users: Path) -> AppTest:
    at = fake_app(monkeypatch, data_dir, timeout=120, users_file=str(users))
    assert not at.exception
    return at


def sign_in(at: AppTest, username: str, password: str = "pw-for-tests") -> AppTest:
    at.text_input(key="sign_in.username").input(username)
    at.text_input(key="sign_in.password").input(password)
    next(b for b in at.button if b.label == "Sign in").click().run()
    assert not at.exception
    return at


def test_nothing_asks_to_sign_in_without_a_users_file(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    assert at.title[0].value == "⚖️ Verify a claim" and at.sidebar.text_input[0].label == "Your name (audit trail)"


def test_the_desk_shows_nothing_until_someone_signs_in(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path) -> None:
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and not at.text_area
    sign_in(at, "ana", "wrong")
    assert any("Unknown user name or wrong password" in e.value for e in at.error) and not at.text_area
    assert at.text_input(key="sign_in.password").value == ""  # the typed password is not kept
    sign_in(at, "ana")
    assert at.title[0].value == "⚖️ Verify a claim"
    assert any("Ana Ruiz" in m.value and "editor" in m.value for m in at.sidebar.markdown)
    assert not [w for w in at.sidebar.text_input if w.key == "checker_name.widget"]  # the name is the account's
    assert at.session_state["checker_name"] == "Ana Ruiz"
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"]


def test_a_checker_runs_but_may_not_override_and_an_editor_may(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    at = sign_in(desk(monkeypatch, demo_data_dir, users_toml), "bo")
    at.selectbox(key="cfg.protocol").select("single").run()
    at.text_area(key="claim_text").input(CLAIM)
    at.button[0].click().run()
    assert not at.exception and at.session_state["last_run_id"]
    assert at.session_state["last_events"][0]["by"] == "Bo Lind", "RunStarted carries who started the run"
    assert any("Only an editor overrides verdicts; you are signed in as a checker" in c.value for c in at.caption)
    assert not [b for b in at.button if b.label == "Record my verdict"]

    at = sign_in(desk(monkeypatch, demo_data_dir, users_toml), "ana")
    at.selectbox(key="cfg.protocol").select("single").run()
    at.text_area(key="claim_text").input(CLAIM)
    at.button[0].click().run()
    run_id = at.session_state["last_run_id"]
    at.selectbox(key=f"live-{run_id}.override.label").set_value("REFUTED")
    at.text_area(key=f"live-{run_id}.override.note").input("retracted")
    next(b for b in at.button if b.label == "Record my verdict").click().run()
    assert any("Recorded: REFUTED by Ana Ruiz" in s.value for s in at.success)


def test_a_broken_users_file_says_how_to_fix_it(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "users.toml"
    broken.write_text('[users.ana]\nrole = "boss"\npassword_hash = "x"\n', encoding="utf-8")
    at = desk(monkeypatch, demo_data_dir, broken)
    assert any("role must be one of editor, checker" in e.value for e in at.error) and not at.text_area
