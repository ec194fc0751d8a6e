"""AppTest: a desk that signs in through an OpenID Connect provider (``[auth]`` in secrets, Streamlit's st.login).

No provider can be reached offline, so these tests cover the configuration path and what the app does with the identity
Streamlit hands it (``st.user``): the sign-in button, an incomplete configuration, a known and an unknown address, the roles.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.newsroom.access.users import oidc_user
from tests.components.conftest import fake_app

AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-long-random-secret-for-tests-only",
    "client_id": "desk",
    "client_secret": "s3cret",
    "server_metadata_url": "https://id.example.org/.well-known/openid-configuration",
}


def oidc_desk(monkeypatch: pytest.MonkeyPatch, data_dir: Path, user: dict[str, object], auth: dict[str, object] = AUTH) -> AppTest:
    at = fake_app(monkeypatch, data_dir, timeout=120, oidc_editors="ana@desk.example", oidc_checkers="@newsroom.example")
    at.secrets["auth"] = auth
    at.user = user
    at.run()
    assert not at.exception
    return at


def test_a_signed_out_visitor_sees_only_the_provider_button(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = oidc_desk(monkeypatch, demo_data_dir, {"is_logged_in": False})
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and not at.text_area
    assert [b.label for b in at.button] == ["Sign in with your organisation's account"]

    named = {k: v for k, v in AUTH.items() if k in ("redirect_uri", "cookie_secret")}
    named["google"] = {k: v for k, v in AUTH.items() if k not in named}
    at = oidc_desk(monkeypatch, demo_data_dir, {"is_logged_in": False}, named)
    assert [b.label for b in at.button] == ["Sign in with google"]


def test_an_incomplete_configuration_says_what_is_missing(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    broken = {k: v for k, v in AUTH.items() if k not in ("cookie_secret", "client_secret")}
    at = oidc_desk(monkeypatch, demo_data_dir, {"is_logged_in": False}, broken)
    assert not at.button and not at.text_area
    message = at.error[0].value.replace("\\", "")  # the page escapes Markdown
    assert "[auth] has no cookie_secret" in message and "[auth] has no client_secret" in message


def test_a_listed_editor_gets_the_desk_and_an_unlisted_address_is_refused(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = oidc_desk(
        monkeypatch, demo_data_dir, {"is_logged_in": True, "email": "Ana@desk.example", "email_verified": True, "name": "Ana Ruiz"}
    )
    assert at.title[0].value == "⚖️ Verify a claim"
    assert any("ana@desk.example" in m.value.replace("\\", "") and "editor" in m.value for m in at.sidebar.markdown)
    assert at.session_state["checker_name"] == "ana@desk.example", "the audit name is the verified address, not the display name"

    at = oidc_desk(
        monkeypatch, demo_data_dir, {"is_logged_in": True, "email": "eve@elsewhere.example", "email_verified": True, "name": "Eve"}
    )
    assert [t.value for t in at.title] == ["⚖️ Sign in to DebateDesk"] and not at.text_area
    assert "is not on this desk's list" in at.error[0].value and [b.label for b in at.button] == ["Sign out"]


def test_roles_come_from_the_address_and_an_unverified_address_is_nobody() -> None:
    editors, checkers = ["ana@desk.example"], ["@newsroom.example"]
    ana = oidc_user({"email": "ANA@desk.example", "email_verified": True, "name": "Ed Editor"}, editors, checkers)
    assert ana is not None and ana.role == "editor" and ana.name == "ana@desk.example", "the address, not the name the person chose"
    bo = oidc_user({"email": "bo@newsroom.example", "email_verified": True}, editors, checkers)
    assert bo is not None and bo.role == "checker" and bo.name == "bo@newsroom.example"
    for flag in (False, "false", "true", 1, None):
        assert oidc_user({"email": "bo@newsroom.example", "email_verified": flag}, editors, checkers) is None, flag
    assert oidc_user({"email": "bo@newsroom.example"}, editors, checkers) is None, "a missing flag is not a verified address"
    assert oidc_user({"email": "bo@sub.newsroom.example", "email_verified": True}, editors, checkers) is None, (
        "a domain entry is that domain only"
    )
    assert oidc_user({"name": "no address"}, editors, checkers) is None
