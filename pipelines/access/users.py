"""A shared desk's users: a local TOML file of names, roles and bcrypt password hashes (or, through an OpenID Connect
provider, addresses given a role: ``oidc_user``); off when neither is configured.

    [users.ana]
    name = "Ana Ruiz"
    role = "editor"            # editor: runs, annotates and overrides verdicts; checker: runs and annotates
    password_hash = "$2b$12$..."   # python -m pipelines.access.users hash

Passwords are checked with bcrypt (a kept library); the file holds no password, only hashes.
"""

from __future__ import annotations

import getpass
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import bcrypt

from pipelines.errors import DebateDeskError

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
    role: DeskRole

    @property
    def can_override(self) -> bool:
        return self.role == "editor"


@dataclass(frozen=True)
class _Account:
    user: User
    password_hash: bytes


class UsersFile:
    """The desk's accounts, read once from a TOML file."""

    def __init__(self, accounts: dict[str, _Account]) -> None:
        self._accounts = accounts

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
            raise UsersFileError(f"{path}: no [users.NAME] tables; see pipelines/access/users.py for the format")
        accounts: dict[str, _Account] = {}
        for username, entry in users.items():
            where = f"{path}: users.{username}"
            if not isinstance(entry, dict):
                raise UsersFileError(f"{where}: must be a table with name, role and password_hash")
            role = entry.get("role")
            if role not in DESK_ROLES:
                raise UsersFileError(f"{where}: role must be one of {', '.join(DESK_ROLES)}, not {role!r}")
            hashed = str(entry.get("password_hash") or "")
            if not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise UsersFileError(f"{where}: password_hash must be a bcrypt hash; make one with `python -m pipelines.access.users hash`")
            name = " ".join(str(entry.get("name") or username).split())
            accounts[username.lower()] = _Account(User(username.lower(), name, cast(DeskRole, role)), hashed.encode())
        return cls(accounts)

    def authenticate(self, username: str, password: str) -> User | None:
        """The user when the password is right; None for an unknown user or a wrong password (the caller says which not)."""
        account = self._accounts.get(username.strip().lower())
        secret = password.encode()[:MAX_PASSWORD_BYTES]
        if account is None:
            bcrypt.checkpw(secret, _DUMMY_HASH)  # as slow as a real check: timing does not tell which names exist
            return None
        return account.user if bcrypt.checkpw(secret, account.password_hash) else None


def oidc_user(claims: Mapping[str, Any], editors: Sequence[str], checkers: Sequence[str]) -> User | None:
    """The desk's user for an identity an OpenID Connect provider vouched for (``st.user``), or None when the desk does not know it.

    The e-mail address decides the role: named in ``editors`` (an address, or ``@domain``), an editor; in ``checkers``, a
    checker; in neither, or not verified by the provider, nobody: a provider such as Google vouches for anyone with an account.
    """
    email = str(claims.get("email") or "").strip().lower()
    if not email or "@" not in email or claims.get("email_verified") is False:
        return None
    domain = "@" + email.rsplit("@", 1)[1]

    def named(entries: Sequence[str]) -> bool:
        return any(entry.strip().lower() in (email, domain) for entry in entries)

    role: DeskRole | None = "editor" if named(editors) else "checker" if named(checkers) else None
    if role is None:
        return None
    name = " ".join(str(claims.get("name") or email).split())[:80]
    return User(username=email, name=name, role=role)


_DUMMY_HASH = bcrypt.hashpw(b"not a password", bcrypt.gensalt(rounds=4))


def hash_password(password: str, rounds: int = 12) -> str:
    if not password:
        raise ValueError("a password cannot be empty")
    return bcrypt.hashpw(password.encode()[:MAX_PASSWORD_BYTES], bcrypt.gensalt(rounds=rounds)).decode()


def main(argv: list[str]) -> int:
    """``python -m pipelines.access.users hash``: asks for a password twice and prints its bcrypt hash for the users file."""
    if argv != ["hash"]:
        print("usage: python -m pipelines.access.users hash", file=sys.stderr)
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
