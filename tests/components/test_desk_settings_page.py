"""AppTest: the desk's settings on the Settings page: an editor changes them for everyone, a checker sees them and cannot."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import fake_app
from tests.components.test_sign_in import browser
from tests.fakes import users_file

SETTINGS = "pages/settings.py"


@pytest.fixture
def desk_env(tmp_path: Path) -> dict[str, str]:
    return {"users_file": str(users_file(tmp_path / "users.toml")), "database_url": f"sqlite:///{tmp_path / 'runs.sqlite'}"}


def signed_in(monkeypatch: pytest.MonkeyPatch, data_dir: Path, env: dict[str, str], username: str) -> AppTest:
    monkeypatch.setenv("DEBATEDESK_DATABASE_URL", env["database_url"])  # the sessions live in the desk's database
    browser(monkeypatch, data_dir, Path(env["users_file"]), username)  # this person's browser, signed in as the form would
    at = fake_app(monkeypatch, data_dir, timeout=120, **env)
    at.switch_page(SETTINGS).run()
    assert not at.exception
    return at


def editor_saves(monkeypatch: pytest.MonkeyPatch, data_dir: Path, env: dict[str, str], limit: str, value: float) -> AppTest:
    """Ana, an editor, sets one budget limit on the settings page and presses Save: her page after it."""
    editor = signed_in(monkeypatch, data_dir, env, "ana")
    editor.number_input(key=f"settings.budget.{limit}").set_value(value).run()
    editor.button(key="settings.save").click().run()
    return editor


def texts(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown) + " " + " ".join(c.value for c in at.caption)


def test_an_editors_change_holds_for_a_checker_who_cannot_change_it(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, desk_env: dict[str, str]
) -> None:
    editor = editor_saves(monkeypatch, demo_data_dir, desk_env, "max_calls", 7)
    assert not editor.exception
    assert any("Saved for the whole desk: 1 change" in s.value for s in editor.success)

    checker = signed_in(monkeypatch, demo_data_dir, desk_env, "bo")  # another session, another person
    assert "7 calls per run" in texts(checker)
    assert "Ana Ruiz" in texts(checker) and "budget\\.max\\_calls" in texts(checker), "the audit list names who changed what"
    # No way to change them on the page: no save button, no limit or endpoint fields.
    assert not [b for b in checker.button if b.key and b.key.endswith(".save")]
    assert not [n for n in checker.number_input if ".budget." in str(n.key)]
    assert not [t for t in checker.text_input if ".model." in str(t.key)]
    assert "Only an editor changes them" in " ".join(c.value for c in checker.caption)

    # And the checker's runs are held to the desk's limit.
    checker.switch_page("pages/verify.py").run()
    assert any("7 calls per run" in c.value for c in checker.sidebar.caption)


def test_a_number_outside_its_range_is_named_with_its_range_and_nothing_is_saved(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, desk_env: dict[str, str]
) -> None:
    editor = signed_in(monkeypatch, demo_data_dir, desk_env, "ana")
    editor.number_input(key="settings.budget.max_calls").set_value(200_000).run()
    errors = " ".join(e.value for e in editor.error)
    assert "Calls per run \\(budget\\.max\\_calls\\) must be a whole number from 0 to 100,000; got '200000'" in errors
    assert "pydantic" not in errors and "less than or equal" not in errors
    assert editor.button(key="settings.save").disabled


def test_a_money_limit_without_a_price_is_refused_on_save(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, desk_env: dict[str, str]
) -> None:
    editor = editor_saves(monkeypatch, demo_data_dir, desk_env, "max_cost", 1.5)
    errors = " ".join(e.value for e in editor.error)
    assert "Not saved: a money limit is set but fake has no price" in errors
    editor.text_input(key="settings.budget.prices").input("fake=0.002").run()
    editor.button(key="settings.save").click().run()
    assert any("Saved for the whole desk: 2 changes" in s.value for s in editor.success)


def test_a_freed_pause_is_shown_free_in_history_and_anyone_takes_it_over(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path, embedder: object
) -> None:
    from pipelines.core.events import RunResumed
    from pipelines.record.store import RunStore
    from pipelines.run import step_gate
    from pipelines.run.llm.fake import FakeChatModel
    from pipelines.run.runner import start_run
    from tests.fakes import fake_config, make_services, with_settings

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    services = make_services(demo_data_dir, embedder)  # type: ignore[arg-type]
    services.store = RunStore(url)
    services.chat_override = FakeChatModel()
    monkeypatch.setattr(step_gate, "PAGE_GONE_AFTER_S", 0.3)  # the page that started it closes at once
    config = with_settings(fake_config(protocol="single"), "pauses", step_mode=True)
    handle = start_run("Masks reduce transmission of respiratory viruses on ferries", config, services, interactive=True, by="Ana")
    list(handle.stream())
    monkeypatch.setattr(step_gate, "PAGE_GONE_AFTER_S", 120.0)

    app = fake_app(monkeypatch, demo_data_dir, timeout=120, database_url=url)
    app.sidebar.text_input(key="checker_name.widget").input("Bo").run()
    app.switch_page("pages/history.py").run()
    app.selectbox(key="history.open").select(handle.run_id).run()
    assert not app.exception
    assert any("paused and nobody holds the pause" in i.value for i in app.info)
    assert "paused at round 0, free to take over" in " ".join(c.value for c in app.caption)
    next(b for b in app.button if b.key == "history.resume" and "Take over" in b.label).click().run()
    assert not app.exception
    assert any("your turn" in m.value for m in app.markdown), "the pause waits for Bo now"
    resumed = [e for e in services.store.events(handle.run_id) if isinstance(e, RunResumed)]
    assert [e.by for e in resumed] == ["Bo"]
