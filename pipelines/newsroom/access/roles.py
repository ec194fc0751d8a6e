"""Who may do what on a shared desk, decided at the moment of acting.

Every action that changes the record names its ``Action`` and calls ``require(person, action)`` where it happens (in
``pipelines/``, not only in a page). ``require`` asks the person's role source again (the users file, read anew, or the
OpenID Connect lists), so an editor demoted in the file loses the override at their next action and a removed user can
no longer run; a refusal says why in plain words and is logged. On a desk without sign-in (one person on their own
machine) there are no roles: the person acts under the name they gave.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from pipelines.core.errors import DebateDeskError
from pipelines.newsroom.access.users import DeskRole, User, UsersFile, UsersFileError, oidc_user

Action = Literal[
    "run", "edit_pause", "comment", "import", "override", "review", "publish", "desk_settings", "delete_documents", "calibrate"
]

EDITOR_ONLY: frozenset[DeskRole] = frozenset({"editor"})
ANY_ROLE: frozenset[DeskRole] = frozenset({"editor", "checker"})
ALLOWED: dict[Action, frozenset[DeskRole]] = {
    "run": ANY_ROLE,
    "edit_pause": ANY_ROLE,
    "comment": ANY_ROLE,
    "import": ANY_ROLE,
    "override": EDITOR_ONLY,
    "review": EDITOR_ONLY,
    "publish": EDITOR_ONLY,
    "desk_settings": EDITOR_ONLY,
    "delete_documents": EDITOR_ONLY,
    "calibrate": EDITOR_ONLY,
}
DOING: dict[Action, str] = {  # "Only an editor may ..." / "... may not <doing>"
    "run": "run claims",
    "edit_pause": "change a paused run",
    "comment": "comment",
    "import": "import records",
    "override": "override verdicts",
    "review": "review claims for publication",
    "publish": "publish fact-checks",
    "desk_settings": "change the desk's settings",
    "delete_documents": "delete corpus documents",
    "calibrate": "calibrate models",
}

log = logging.getLogger("debatedesk.access")


class NotAllowedError(DebateDeskError):
    """The person may not do this now; the message says why in plain words."""


class RoleSource(Protocol):
    """Where a signed-in person's role is read from, anew at each action."""

    def current(self, account: str) -> User | None: ...


@dataclass(frozen=True)
class UsersFileRoles:
    """Roles from the desk's users file, read again each time."""

    path: Path

    def current(self, account: str) -> User | None:
        try:
            return UsersFile.load(self.path).user(account)
        except UsersFileError as exc:
            raise NotAllowedError(f"the desk's users file cannot be read, so nobody may act until it is fixed: {exc}") from exc


@dataclass(frozen=True)
class OidcRoles:
    """Roles from the desk's OIDC lists (addresses or @domain), for an address the provider verified at sign-in."""

    editors: Sequence[str]
    checkers: Sequence[str]

    def current(self, account: str) -> User | None:
        return oidc_user({"email": account, "email_verified": True}, self.editors, self.checkers)


@dataclass(frozen=True)
class Person:
    """Who acts: the name the record carries, and on a shared desk the account and where its role is read from.

    ``account`` and ``roles`` are None on a desk without sign-in. ``role`` is the role when last read (for display);
    ``require`` reads it again."""

    name: str
    account: str | None = None
    role: DeskRole | None = None
    roles: RoleSource | None = None

    @classmethod
    def on_open_desk(cls, name: str) -> Person:
        """The person at a desk without sign-in, under the name they gave."""
        return cls(name=" ".join(name.split()))

    @classmethod
    def signed_in(cls, user: User, roles: RoleSource) -> Person:
        return cls(name=user.name, account=user.username, role=user.role, roles=roles)

    def may(self, action: Action) -> bool:
        """Whether the role as last read allows the action (for showing a form or not; ``require`` decides)."""
        return self.roles is None or (self.role is not None and self.role in ALLOWED[action])


def require(person: Person, action: Action) -> Person:
    """The person as they are now, when they may do ``action``; else NotAllowedError with the reason (and a log line)."""
    if person.roles is None or person.account is None:
        if person.roles is not None or person.account is not None:
            _refuse(person, action, "who is acting is not known: sign in again")
        return person
    user = person.roles.current(person.account)
    if user is None:
        _refuse(person, action, f"{person.account} is no longer on this desk's list of users; ask whoever runs the desk")
    assert user is not None
    if user.role not in ALLOWED[action]:
        roles = " or ".join(sorted(ALLOWED[action]))
        _refuse(person, action, f"only an {roles} may {DOING[action]}; {user.name} is signed in as a {user.role}")
    return replace(person, name=user.name, role=user.role)


def require_role(user: User | None, action: Action) -> None:
    """For a person already read now from the sign-in (``acting_user`` in a page): refuse unless their role allows ``action``.

    None is the person at a desk without sign-in, who holds every role. NotAllowedError with the reason (and a log line).
    """
    if user is not None and user.role not in ALLOWED[action]:
        roles = " or ".join(sorted(ALLOWED[action]))
        _refuse(
            Person(name=user.name, account=user.username),
            action,
            f"only an {roles} may {DOING[action]}; {user.name} is signed in as a {user.role}",
        )


def _refuse(person: Person, action: Action, reason: str) -> None:
    log.warning("refused %s for %s: %s", action, person.account or person.name or "nobody", reason)
    raise NotAllowedError(reason)


def acting_name(by: Person | str, action: Action) -> str:
    """The name to record for ``by``: a Person is checked for ``action`` now; a bare name is a caller without sign-in
    (the command line on a desk without a users file, a batch, a test)."""
    return require(by, action).name if isinstance(by, Person) else " ".join(by.split())
