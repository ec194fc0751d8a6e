"""AppTest: a shared desk shows nothing until a session cookie signs someone in, records the signed-in name, reads the role
from the users file at every action (a demoted editor loses the override, a removed user is signed out) and lets only an
editor override; sign-out ends the session, here or everywhere. Without a users file nothing asks (the one-person desk of
`make run`), and the name given is kept per browser, never in the page's address."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components import identity, sign_in, web
from components.resources import get_services
from pipelines.newsroom.access.sessions import BROWSER_COOKIE, SESSION_COOKIE
from pipelines.newsroom.access.users import User, hash_password
from tests.components.conftest import fake_app

CLAIM = "Masks reduce transmission of respiratory viruses on trams"
HASH = hash_password("pw-for-tests", rounds=4)


def write_users(path: Path, **roles: str) -> Path:
    names = {"ana": "Ana Ruiz", "bo": "Bo Lind"}
    path.write_text("".join(f'[users.{u}]\nname = "{names[u]}"\nrole = "{r}"\npassword_hash = "{HASH}"\n' for u, r in roles.items()))
    return path


@pytest.fixture
def users_toml(tmp_path: Path) -> Path:
    return write_users(tmp_path / "users.toml", ana="editor", bo="checker")


def browser(monkeypatch: pytest.MonkeyPatch, data_dir: Path, users: Path | None, account: str | None = None) -> dict[str, str]:
    """The cookies a browser sends: its own browser cookie, and a session of ``account`` when given (as the sign-in form
    would have set it)."""
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(data_dir))
    if users is not None:
        monkeypatch.setenv("DEBATEDESK_USERS_FILE", str(users))
    sessions, _ = web.desk()
    cookies = {BROWSER_COOKIE: sessions.new_browser()}
    if account is not None:
        cookies[SESSION_COOKIE] = sessions.start(account)
    monkeypatch.setattr(identity, "request_cookie", cookies.get)
    return cookies


def desk(monkeypatch: pytest.MonkeyPatch, data_dir: Path, users: Path) -> AppTest:
    at = fake_app(monkeypatch, data_dir, timeout=120, users_file=str(users))
    assert not at.exception
    return at


def run_claim(at: AppTest) -> str:
    at.selectbox(key="cfg.protocol").select("single").run()
    at.text_area(key="claim_text").input(CLAIM)
    at.button[0].click().run()
    assert not at.exception and at.session_state["last_run_id"]
    return str(at.session_state["last_run_id"])


def editor_ran_a_claim(monkeypatch: pytest.MonkeyPatch, data_dir: Path, users: Path) -> tuple[AppTest, str]:
    """Ana, an editor, signed in on her browser and ran a claim: her page, and the run's id."""
    browser(monkeypatch, data_dir, users, "ana")
    at = desk(monkeypatch, data_dir, users)
    return at, run_claim(at)


def fill_override(at: AppTest, run_id: str, note: str = "") -> None:
    """The override form on the run's card, set to REFUTED (with a note), not yet sent."""
    at.selectbox(key=f"live-{run_id}.override.label").set_value("REFUTED")
    if note:
        at.text_area(key=f"live-{run_id}.override.note").input(note)


def record_verdict(at: AppTest) -> None:
    next(b for b in at.button if b.label == "Record my verdict").click().run()


def test_without_a_users_file_the_name_is_kept_per_browser_and_never_in_the_address(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path
) -> None:
    browser(monkeypatch, demo_data_dir, None)
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    assert at.title[0].value == "⚖️ Verify a claim" and at.sidebar.text_input[0].label == "Your name (audit trail)"
    at.sidebar.text_input(key="checker_name.widget").input("Ana Ruiz").run()
    assert "checker" not in at.query_params and not any("Ana" in str(v) for v in at.query_params.values())
    again = fake_app(monkeypatch, demo_data_dir, timeout=120)  # a reload, or a new tab: the same browser cookie
    assert again.session_state["checker_name"] == "Ana Ruiz" and again.sidebar.text_input[0].value == "Ana Ruiz"
    browser(monkeypatch, demo_data_dir, None)  # another browser
    assert fake_app(monkeypatch, demo_data_dir, timeout=120).session_state["checker_name"] == ""


def test_a_name_in_the_address_names_nobody(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    browser(monkeypatch, demo_data_dir, None)
    for role in ("DEBATER", "JUDGE", "SCORER"):
        monkeypatch.setenv(f"DEBATEDESK_{role}__BACKEND", "fake")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.query_params["checker"] = "Ana Ruiz"  # a link a colleague sent
    at.run()
    assert at.session_state["checker_name"] == ""


def test_the_desk_shows_nothing_until_a_session_signs_someone_in(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    browser(monkeypatch, demo_data_dir, users_toml)
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and not at.text_area and not at.sidebar.text_input
    assert any(web.SIGN_IN_PATH in h.proto.body for h in at.get("html"))
    assert not any("server.py" in w.value for w in at.warning)

    browser(monkeypatch, demo_data_dir, users_toml, "ana")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert at.title[0].value == "⚖️ Verify a claim"
    assert any("Ana Ruiz" in m.value and "editor" in m.value for m in at.sidebar.markdown)
    assert not [w for w in at.sidebar.text_input if w.key == "checker_name.widget"]  # the name is the account's
    assert at.session_state["checker_name"] == "Ana Ruiz"


def test_session_state_cannot_make_a_checker_an_editor(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path) -> None:
    browser(monkeypatch, demo_data_dir, users_toml, "bo")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    run_id = run_claim(at)
    assert at.session_state["last_events"][0]["by"] == "Bo Lind", "RunStarted carries who started the run"
    assert any("Only an editor overrides verdicts; you are signed in as a checker" in c.value for c in at.caption)
    assert not [b for b in at.button if b.label == "Record my verdict"]
    at.session_state["signed_in"] = User("ana", "Ana Ruiz", "editor")  # whatever the page's state says...
    at.session_state["checker_name"] = "Ana Ruiz"
    at.run()
    assert any("Bo Lind" in m.value for m in at.sidebar.markdown), "...the session cookie decides who this is"
    assert not [b for b in at.button if b.label == "Record my verdict"]
    assert run_id == at.session_state["last_run_id"]


def test_a_demoted_editor_is_refused_the_override_at_the_next_action(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    at, run_id = editor_ran_a_claim(monkeypatch, demo_data_dir, users_toml)
    fill_override(at, run_id, "retracted")
    write_users(users_toml, ana="checker", bo="checker")  # demoted while the form is open
    record_verdict(at)
    assert any("only an editor may override verdicts; Ana Ruiz is signed in as a checker" in e.value for e in at.error)
    assert not any("Recorded:" in s.value for s in at.success)
    write_users(users_toml, ana="editor", bo="checker")
    at.run()
    fill_override(at, run_id, "retracted")
    record_verdict(at)
    assert any("Recorded: REFUTED by Ana Ruiz" in s.value for s in at.success)


def test_a_removed_user_is_signed_out_at_the_next_step(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path) -> None:
    browser(monkeypatch, demo_data_dir, users_toml, "bo")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert at.title[0].value == "⚖️ Verify a claim"
    write_users(users_toml, ana="editor")
    at.run()
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and not at.text_area
    assert any("no longer on this desk's list of users" in w.value for w in at.warning)


def test_sign_out_ends_the_session_and_sign_out_everywhere_ends_them_all(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    cookies = browser(monkeypatch, demo_data_dir, users_toml, "ana")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and any("You have signed out" in i.value for i in at.info)
    sessions, _ = web.desk()
    assert sessions.username(cookies[SESSION_COOKIE]) is None

    other_browser = sessions.start("ana")
    browser(monkeypatch, demo_data_dir, users_toml, "ana")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    next(b for b in at.sidebar.button if b.label == "Sign out everywhere").click().run()
    assert any("signed out everywhere" in i.value for i in at.info)
    assert sessions.username(other_browser) is None


def test_a_broken_users_file_says_how_to_fix_it(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "users.toml"
    broken.write_text('[users.ana]\nrole = "boss"\npassword_hash = "x"\n', encoding="utf-8")
    browser(monkeypatch, demo_data_dir, broken)
    at = desk(monkeypatch, demo_data_dir, broken)
    assert any("role must be one of editor, checker" in e.value for e in at.error) and not at.text_area


@pytest.mark.parametrize("address", ["0.0.0.0", ""])
def test_beyond_this_machine_with_nobody_signing_in_the_desk_refuses_unless_opened_and_then_says_so(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, address: str
) -> None:
    browser(monkeypatch, demo_data_dir, None)
    monkeypatch.setattr(sign_in, "listening_address", lambda: address)
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    assert any("nobody signs in" in e.value and "DEBATEDESK_OPEN_DESK=1" in e.value for e in at.error) and not at.text_area
    at = fake_app(monkeypatch, demo_data_dir, timeout=120, open_desk="1")
    assert at.text_area and any("Open desk" in w.value for w in at.warning)
    at.switch_page("pages/history.py").run()
    assert at.title[-1].value == "🗂️ History" and any("Open desk" in w.value for w in at.warning), "every page says so"


def test_on_this_machine_or_with_sign_in_there_is_no_banner(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path) -> None:
    browser(monkeypatch, demo_data_dir, None)
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    assert not any("Open desk" in w.value for w in at.warning) and not at.error
    browser(monkeypatch, demo_data_dir, users_toml, "ana")
    monkeypatch.setattr(sign_in, "listening_address", lambda: "0.0.0.0")
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert at.text_area and not any("Open desk" in w.value for w in at.warning)


def test_started_without_the_desks_routes_it_says_how_to_start_it(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    browser(monkeypatch, demo_data_dir, users_toml)
    monkeypatch.setattr(identity, "request_cookie", lambda name: None)  # `streamlit run app.py`: no browser cookie was ever set
    at = desk(monkeypatch, demo_data_dir, users_toml)
    assert any("streamlit run server.py" in w.value for w in at.warning) and not at.text_area


def test_a_session_ended_elsewhere_cannot_act_once_more_from_an_open_page(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, users_toml: Path
) -> None:
    at, run_id = editor_ran_a_claim(monkeypatch, demo_data_dir, users_toml)
    fill_override(at, run_id)
    sessions, _ = web.desk()
    sessions.end_all("ana")  # "Sign out everywhere" from another browser, while this page is open
    record_verdict(at)  # the callback runs before the page checks
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"]
    store = get_services().store
    assert store is not None and store.events_of_type(run_id, "VerdictOverridden") == []
