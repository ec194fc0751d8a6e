"""Roles are checked where the action happens, from the users file as it is at that moment: a demoted editor loses the
override at the next action, a removed user can no longer run, and a refusal says why and is logged."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pipelines.core.errors import DebateDeskError
from pipelines.newsroom.access.roles import ALLOWED, NotAllowedError, OidcRoles, Person, UsersFileRoles, acting_name, require
from pipelines.newsroom.access.users import UsersFile, hash_password
from pipelines.run.runner import start_run
from pipelines.run.services import Services
from pipelines.run.step_gate import override_verdict
from tests.fakes import fake_config

HASH = hash_password("pw", rounds=4)


def write_users(path: Path, **roles: str) -> Path:
    path.write_text("".join(f'[users.{u}]\nname = "{u.title()}"\nrole = "{r}"\npassword_hash = "{HASH}"\n' for u, r in roles.items()))
    return path


def person(path: Path, account: str) -> Person:
    user = UsersFile.load(path).user(account)
    assert user is not None
    return Person.signed_in(user, UsersFileRoles(path))


def test_the_table_of_actions_gives_editors_everything_and_checkers_the_daily_work() -> None:
    assert {a for a, roles in ALLOWED.items() if "checker" in roles} == {"run", "edit_pause", "comment", "import"}
    assert all("editor" in roles for roles in ALLOWED.values())


def test_a_demoted_editor_loses_the_override_at_the_next_action(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_users(tmp_path / "users.toml", ana="editor", bo="checker")
    ana = person(path, "ana")
    assert require(ana, "override").role == "editor"
    write_users(path, ana="checker", bo="checker")  # demoted while signed in
    assert ana.may("override"), "the role read at sign-in still says editor..."
    with (
        caplog.at_level(logging.WARNING, logger="debatedesk.access"),
        pytest.raises(NotAllowedError, match="only an editor may override verdicts; Ana is signed in as a checker"),
    ):
        require(ana, "override")  # ...but the action reads the file again
    assert "refused override for ana" in caplog.text
    assert require(ana, "run").role == "checker"


def test_a_removed_user_can_no_longer_run(tmp_path: Path) -> None:
    path = write_users(tmp_path / "users.toml", ana="editor", bo="checker")
    bo = person(path, "bo")
    write_users(path, ana="editor")
    with pytest.raises(NotAllowedError, match="bo is no longer on this desk's list of users"):
        require(bo, "run")


def test_a_broken_users_file_stops_everyone_with_the_reason(tmp_path: Path) -> None:
    path = write_users(tmp_path / "users.toml", ana="editor")
    ana = person(path, "ana")
    path.write_text("not = [toml")
    with pytest.raises(NotAllowedError, match="users file cannot be read"):
        require(ana, "run")


def test_without_sign_in_the_named_person_may_act_and_a_half_made_person_may_not() -> None:
    assert require(Person.on_open_desk("  Ana  Ruiz "), "override").name == "Ana Ruiz"
    with pytest.raises(NotAllowedError, match="sign in again"):
        require(Person(name="Ana", account="ana"), "override")
    assert acting_name(" Ana ", "override") == "Ana"


def test_oidc_roles_come_from_the_lists_as_they_are_now() -> None:
    editors: list[str] = ["@paper.example"]
    ana = Person(name="ana@paper.example", account="ana@paper.example", role="editor", roles=OidcRoles(editors, []))
    assert require(ana, "override").role == "editor"
    editors.clear()
    with pytest.raises(NotAllowedError, match="no longer on this desk's list"):
        require(ana, "run")


def test_override_verdict_refuses_a_checker_and_stores_nothing(tmp_path: Path, services: Services) -> None:
    path = write_users(tmp_path / "users.toml", ana="editor", bo="checker")
    handle = start_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services, by=person(path, "bo"))
    list(handle.stream())
    assert services.store is not None
    before = len(services.store.events(handle.run_id))
    with pytest.raises(NotAllowedError, match="only an editor may override verdicts"):
        override_verdict(services.store, handle.run_id, "REFUTES", "no", person(path, "bo"))
    assert len(services.store.events(handle.run_id)) == before
    evt = override_verdict(services.store, handle.run_id, "REFUTES", "retracted", person(path, "ana"))
    assert evt.by == "Ana"
    assert services.store.events(handle.run_id)[0].by == "Bo"  # type: ignore[attr-defined]


def test_a_removed_user_starts_no_run(tmp_path: Path, services: Services) -> None:
    path = write_users(tmp_path / "users.toml", ana="editor", bo="checker")
    bo = person(path, "bo")
    write_users(path, ana="editor")
    assert services.store is not None
    runs = len(services.store.list_runs())
    with pytest.raises(DebateDeskError, match="no longer on this desk"):
        start_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services, by=bo)
    assert len(services.store.list_runs()) == runs
