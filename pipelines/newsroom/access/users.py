"""A shared desk's users: a local TOML file of names, roles and bcrypt password hashes (or, through an OpenID Connect
provider, addresses given a role: ``oidc_user``); off when neither is configured.

    [users.ana]
    name = "Ana Ruiz"          # what the audit trail records
    role = "editor"            # what each role may do: pipelines/newsroom/access/roles.py (ALLOWED)
    password_hash = "$2b$12$..."   # python -m pipelines.newsroom.access.users hash

Passwords are checked with bcrypt (a kept library); the file holds no password, only hashes. Account names, and the names
the trail records, are each one person whatever their case: a file with two of either is refused. The file is read again
at each action (pipelines/newsroom/access/roles.py), so an edit holds from the next one.
"""

from __future__ import annotations

import functools
import getpass
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import bcrypt

from pipelines.core.errors import DebateDeskError

DeskRole = Literal["editor", "checker"]
DESK_ROLES: tuple[DeskRole, ...] = ("editor", "checker")
MAX_PASSWORD_BYTES = 72  # bcrypt reads no further


class UsersFileError(DebateDeskError):
    """The users file cannot be read; the message names the file, the user and the fix."""


@dataclass(frozen=True)
class User:
    """Who is signed in: the account, the name the audit trail records, and what the role allows."""

    username: str
    name: str
    role: DeskRole  # what it allows: pipelines.newsroom.access.roles.ALLOWED


@dataclass(frozen=True)
class _Account:
    user: User
    password_hash: bytes


class UsersFile:
    """The desk's accounts, read once from a TOML file."""

    def __init__(self, accounts: dict[str, _Account]) -> None:
        self._accounts = accounts
        # An unknown name is checked against a stand-in hash of the same cost as the real ones, so it takes as long.
        self._dummy_hash = _dummy_hash(max((_cost(a.password_hash) for a in accounts.values()), default=12))

    @classmethod
    def load(cls, path: Path) -> UsersFile:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsersFileError(f"{path}: cannot read the users file ({exc.strerror}); check DEBATEDESK_USERS_FILE") from exc
        except tomllib.TOMLDecodeError as exc:
            raise UsersFileError(f"{path}: not valid TOML ({exc})") from exc
        users = data.get("users")
        if not isinstance(users, dict) or not users:
            raise UsersFileError(f"{path}: no [users.NAME] tables; see pipelines/newsroom/access/users.py for the format")
        accounts: dict[str, _Account] = {}
        written: dict[str, str] = {}  # each account's name as the file spells it
        audit_names: dict[str, str] = {}  # each audit name (lower case) -> the account that has it
        for username, entry in users.items():
            where = f"{path}: users.{username}"
            if (same := written.setdefault(username.lower(), username)) != username:
                raise UsersFileError(
                    f"{path}: users.{same} and users.{username} differ only in case; "
                    "user names are one account whatever the case: rename or remove one"
                )
            if not isinstance(entry, dict):
                raise UsersFileError(f"{where}: must be a table with name, role and password_hash")
            role = entry.get("role")
            if role not in DESK_ROLES:
                raise UsersFileError(f"{where}: role must be one of {', '.join(DESK_ROLES)}, not {role!r}")
            hashed = str(entry.get("password_hash") or "")
            if not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise UsersFileError(
                    f"{where}: password_hash must be a bcrypt hash; make one with `python -m pipelines.newsroom.access.users hash`"
                )
            name = " ".join(str(entry.get("name") or username).split())
            if (other := audit_names.setdefault(name.lower(), username)) != username:
                raise UsersFileError(f"{where}: users.{other} already has the name {name!r}; the audit trail must tell two people apart")
            accounts[username.lower()] = _Account(User(username.lower(), name, cast(DeskRole, role)), hashed.encode())
        return cls(accounts)

    def authenticate(self, username: str, password: str) -> User | None:
        """The user when the password is right; None for an unknown user or a wrong password (the caller says which not).

        Both cases cost one bcrypt check of the same cost, so the answer's time does not tell which names exist."""
        account = self._accounts.get(username.strip().lower())
        secret = password.encode()[:MAX_PASSWORD_BYTES]
        if account is None:
            bcrypt.checkpw(secret, self._dummy_hash)
            return None
        return account.user if bcrypt.checkpw(secret, account.password_hash) else None

    def user(self, username: str) -> User | None:
        """The account's user as the file says now (role and name), or None when the file no longer has it."""
        account = self._accounts.get(username.strip().lower())
        return account.user if account is not None else None

    def people(self) -> list[User]:
        """The desk's people (no hashes), by name: whom a claim can be assigned to."""
        return sorted((a.user for a in self._accounts.values()), key=lambda u: u.name.lower())


def oidc_user(claims: Mapping[str, Any], editors: Sequence[str], checkers: Sequence[str]) -> User | None:
    """The desk's user for an identity an OpenID Connect provider vouched for (``st.user``), or None when the desk does not know it.

    The e-mail address decides the role: named in ``editors`` (an address, or ``@domain``), an editor; in ``checkers``, a
    checker; in neither, or not verified by the provider, nobody: a provider such as Google vouches for anyone with an account.
    Only a real ``true`` counts as verified (a missing flag or the string "false" does not), and the audit trail records the
    address, which the provider vouched for, not the display name, which the person chose.
    """
    email = str(claims.get("email") or "").strip().lower()
    if not email or "@" not in email or claims.get("email_verified") is not True:
        return None
    domain = "@" + email.rsplit("@", 1)[1]

    def named(entries: Sequence[str]) -> bool:
        return any(entry.strip().lower() in (email, domain) for entry in entries)

    role: DeskRole | None = "editor" if named(editors) else "checker" if named(checkers) else None
    if role is None:
        return None
    return User(username=email, name=email, role=role)


def _cost(password_hash: bytes) -> int:
    """The cost factor of a bcrypt hash (``$2b$12$...`` costs 12)."""
    try:
        return int(password_hash.split(b"$")[2])
    except (IndexError, ValueError):
        return 12


@functools.cache
def _dummy_hash(rounds: int) -> bytes:
    return bcrypt.hashpw(b"not a password", bcrypt.gensalt(rounds=min(max(rounds, 4), 31)))


def hash_password(password: str, rounds: int = 12) -> str:
    if not password:
        raise ValueError("a password cannot be empty")
    return bcrypt.hashpw(password.encode()[:MAX_PASSWORD_BYTES], bcrypt.gensalt(rounds=rounds)).decode()


def main(argv: list[str]) -> int:
    """``python -m pipelines.newsroom.access.users hash``: asks for a password twice and prints its bcrypt hash for the users file."""
    if argv != ["hash"]:
        print("usage: python -m pipelines.newsroom.access.users hash", file=sys.stderr)
        return 2
    first, second = getpass.getpass("Password: "), getpass.getpass("Again: ")
    if first != second:
        print("the two passwords differ", file=sys.stderr)
        return 1
    if not first.strip():
        print("the password is empty; type the password the user will sign in with", file=sys.stderr)
        return 1
    print(hash_password(first))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
