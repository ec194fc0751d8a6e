"""The users file of a shared desk: read with clear refusals, passwords checked with bcrypt, roles that say what they allow."""

from pathlib import Path

import bcrypt
import pytest

from pipelines.newsroom.access.roles import ALLOWED
from pipelines.newsroom.access.users import UsersFile, UsersFileError, hash_password, main


def users_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "users.toml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def hashed() -> str:
    return hash_password("correct horse", rounds=4)


def test_the_right_password_signs_in_with_the_name_and_role(tmp_path: Path, hashed: str) -> None:
    path = users_file(
        tmp_path,
        f'[users.ana]\nname = "Ana  Ruiz"\nrole = "editor"\npassword_hash = "{hashed}"\n'
        f'[users.bo]\nrole = "checker"\npassword_hash = "{hashed}"\n',
    )
    users = UsersFile.load(path)
    ana = users.authenticate(" ANA ", "correct horse")
    assert ana is not None and (ana.username, ana.name, ana.role) == ("ana", "Ana Ruiz", "editor")
    bo = users.authenticate("bo", "correct horse")
    assert bo is not None and bo.name == "bo" and bo.role not in ALLOWED["override"]
    assert users.authenticate("ana", "wrong") is None and users.authenticate("nobody", "correct horse") is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not = [toml", "not valid TOML"),
        ("[other]\nx = 1\n", r"no \[users.NAME\] tables"),
        ('[users.ana]\nrole = "admin"\npassword_hash = "$2b$04$x"\n', "users.ana: role must be one of editor, checker, not 'admin'"),
        ('[users.ana]\nrole = "editor"\npassword_hash = "hunter2"\n', "users.ana: password_hash must be a bcrypt hash"),
        ('users = { ana = "editor" }\n', "users.ana: must be a table"),
    ],
)
def test_a_bad_users_file_is_refused_with_where_and_how_to_fix_it(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(UsersFileError, match=message):
        UsersFile.load(users_file(tmp_path, body))


def test_a_missing_users_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(UsersFileError, match="DEBATEDESK_USERS_FILE"):
        UsersFile.load(tmp_path / "nope.toml")


def test_the_hash_command_prints_a_hash_that_checks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "s3cret pass")
    assert main(["hash"]) == 0
    printed = capsys.readouterr().out.strip()
    path = users_file(tmp_path, f'[users.ana]\nrole = "checker"\npassword_hash = "{printed}"\n')
    assert UsersFile.load(path).authenticate("ana", "s3cret pass") is not None
    with pytest.raises(ValueError, match="cannot be empty"):
        hash_password("")


def test_two_accounts_differing_only_in_case_are_refused(tmp_path: Path, hashed: str) -> None:
    body = f'[users.Ana]\nrole = "editor"\npassword_hash = "{hashed}"\n[users.ana]\nrole = "checker"\npassword_hash = "{hashed}"\n'
    with pytest.raises(UsersFileError, match="users.Ana and users.ana differ only in case"):
        UsersFile.load(users_file(tmp_path, body))


def test_an_unknown_name_is_checked_against_a_hash_as_costly_as_the_real_ones(tmp_path: Path) -> None:
    real = hash_password("correct horse", rounds=6)
    users = UsersFile.load(users_file(tmp_path, f'[users.ana]\nrole = "editor"\npassword_hash = "{real}"\n'))
    checked: list[bytes] = []
    original = bcrypt.checkpw
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bcrypt, "checkpw", lambda secret, hashed: checked.append(hashed) or original(secret, hashed))
        assert users.authenticate("nobody", "correct horse") is None and users.authenticate("ana", "wrong") is None
    assert [h.split(b"$")[2] for h in checked] == [b"06", b"06"], "the same cost for an unknown name as for a known one"


def test_the_account_as_the_file_says_now(tmp_path: Path, hashed: str) -> None:
    users = UsersFile.load(users_file(tmp_path, f'[users.Ana]\nname = "Ana Ruiz"\nrole = "editor"\npassword_hash = "{hashed}"\n'))
    ana = users.user(" ANA ")
    assert ana is not None and (ana.username, ana.role) == ("ana", "editor") and users.user("bo") is None


def test_two_accounts_with_one_audit_name_are_refused(tmp_path: Path, hashed: str) -> None:
    body = (
        f'[users.ana]\nname = "Ana Ruiz"\nrole = "editor"\npassword_hash = "{hashed}"\n'
        f'[users.ar]\nname = "ana  RUIZ"\nrole = "checker"\npassword_hash = "{hashed}"\n'
    )
    with pytest.raises(UsersFileError, match="users.ana already has the name 'ana RUIZ'"):
        UsersFile.load(users_file(tmp_path, body))
