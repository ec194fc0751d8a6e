"""AppTest: a calm sidebar (only the chosen protocol's settings), the Settings page (presets, per-role models, a connection
test, search and step mode) feeding every run, and the checker's name at the top, kept across pages and reloads."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.config import ROLES
from pipelines.core.text.safety import escape_markdown
from pipelines.run.llm.presets import LOCAL_SERVER_URL
from tests.components.conftest import fake_app

SETTINGS = "pages/settings.py"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> AppTest:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # A run database of the test's own: the desk's settings saved in one test must not reach another.
    return fake_app(monkeypatch, demo_data_dir, timeout=120, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")


def settings_page(app: AppTest) -> AppTest:
    app.switch_page(SETTINGS).run()
    assert not app.exception
    return app


def test_the_sidebar_holds_only_the_chosen_protocols_settings_and_those_every_protocol_shares(app: AppTest) -> None:
    assert [e.label for e in app.sidebar.expander] == ["Settings: desk", "Belief and rulings"]
    app.selectbox(key="cfg.protocol").select("proclaim").run()
    assert [e.label for e in app.sidebar.expander] == ["Settings: proclaim", "Belief and rulings"]
    app.selectbox(key="cfg.belief.verdict").select("published").run()
    assert not app.exception
    assert not any(w.key and ".backend" in w.key for w in app.sidebar.selectbox)  # models live on the Settings page
    assert any("fake for every role" in c.value for c in app.sidebar.caption)


def test_the_checker_name_is_first_in_the_sidebar_and_kept_across_pages_never_in_the_url(app: AppTest) -> None:
    assert app.sidebar.text_input[0].label == "Your name (audit trail)"
    app.sidebar.text_input[0].input("  Ana   Ruiz ").run()
    for page in ("pages/history.py", SETTINGS, "pages/corpora.py", "pages/batch.py", "pages/benchmark.py", "pages/verify.py"):
        app.switch_page(page).run()
        assert not app.exception, page
        assert app.sidebar.text_input[0].label == "Your name (audit trail)", page
        assert app.sidebar.text_input[0].value == "Ana Ruiz", page
        assert "checker" not in app.query_params, page  # a link copied from here names nobody (tests/components/test_sign_in.py)


def test_a_name_is_shown_as_typed_never_as_markup(app: AppTest) -> None:
    app.sidebar.text_input[0].input("**Bo** <b>").run()
    app.switch_page("pages/history.py").run()
    assert not app.exception and app.sidebar.text_input[0].value == "**Bo** <b>"


def test_a_preset_moves_every_role_and_the_sidebar_says_so(app: AppTest) -> None:
    settings_page(app)
    app.selectbox(key="settings.preset").select("local").run()
    next(b for b in app.button if b.label == "Apply to every role").click().run()
    assert not app.exception
    for role in ROLES:  # redrawn under new keys: a browser would keep showing the old widgets' values otherwise
        assert app.text_input(key=f"settings.v1.model.{role}.base_url").value == LOCAL_SERVER_URL
        assert app.selectbox(key=f"settings.v1.model.{role}.backend").value == "openai"
    assert app.selectbox(key="settings.v1.preset").value == "local"
    app.switch_page("pages/verify.py").run()
    assert any("fake" in c.value and "every role" in c.value for c in app.sidebar.caption), "not the desk's until saved"
    app.switch_page("pages/settings.py").run()
    app.button(key="settings.v1.save").click().run()
    assert any("Saved for the whole desk" in s.value for s in app.success)
    app.switch_page("pages/verify.py").run()
    assert any("openai" in c.value and "every role" in c.value for c in app.sidebar.caption)
    assert not app.sidebar.warning  # the fake's caveat is gone with the fake


def test_test_connection_fails_fast_and_clearly_when_nothing_listens(app: AppTest) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings_page(app)
    app.selectbox(key="settings.model.judge.backend").select("openai").run()
    app.text_input(key="settings.model.judge.base_url").input(f"http://127.0.0.1:{port}/v1").run()
    next(b for b in app.button if b.key == "settings.test.judge").click().run()
    errors = " ".join(e.value for e in app.error)
    assert escape_markdown(f"Nothing is listening at 127.0.0.1:{port}: is the server running") in errors
    next(b for b in app.button if b.key == "settings.test.debater").click().run()
    assert any("needs no connection" in s.value for s in app.success)  # the debater is still on fake


def test_a_malformed_domain_is_refused_with_how_to_fix_it_and_the_last_valid_settings_stay(app: AppTest) -> None:
    settings_page(app)
    app.number_input(key="settings.retrieval.top_k").set_value(7).run()
    app.text_input(key="settings.retrieval.deny_domains").input("https://www.dailymail.co.uk/health").run()
    assert not app.exception
    messages = " ".join(e.value for e in app.error)
    assert escape_markdown("write only the domain, e.g. www.dailymail.co.uk") in messages  # shown as text: it quotes what was typed
    assert app.session_state["run_settings"].retrieval.top_k == 7  # what was set before is kept
    app.text_input(key="settings.retrieval.deny_domains").input("dailymail.co.uk").run()
    assert not app.error
    assert app.session_state["run_settings"].retrieval.deny_domains == ["dailymail.co.uk"]


def test_settings_reach_the_run_from_the_verify_page(app: AppTest) -> None:
    settings_page(app)
    app.number_input(key="settings.retrieval.top_k").set_value(1).run()
    app.switch_page("pages/verify.py").run()
    app.selectbox(key="cfg.protocol").select("single").run()
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    assert not app.exception
    assert len(app.dataframe[0].value) == 1  # one passage per query: the Settings page's top k
