"""Who acts from the command line: on a desk with a users file, an account proven by its password, never a bare name."""

from __future__ import annotations

import getpass
import os

from pipelines.core.config import AppSettings
from pipelines.newsroom.access.roles import Action, NotAllowedError, Person, UsersFileRoles, require
from pipelines.newsroom.access.users import UsersFile

BY_HELP = "with a users file: your account, whose password is asked for (or read from DEBATEDESK_PASSWORD)"
PASSWORD_ENV = "DEBATEDESK_PASSWORD"


def acting_person(by: str, action: Action) -> Person | str:
    """Who acts from the command line. Without a users file, the name given (or none). With one, the account named by
    ``--by``, only when its password is right (asked for at the terminal, or DEBATEDESK_PASSWORD for a script), and only
    when its role allows ``action``; failures count towards the same slowing-down as the sign-in page's."""
    path = AppSettings().users_file
    if path is None:
        return by
    if not by.strip():
        raise NotAllowedError(f"this desk signs in (DEBATEDESK_USERS_FILE): say who you are with --by ACCOUNT; {BY_HELP}")
    password = os.environ.get(PASSWORD_ENV)  # the command line is where the environment is read; never logged or stored
    if password is None:
        try:
            password = getpass.getpass(f"Password for {by.strip()}: ")
        except EOFError:  # no terminal to ask at
            raise NotAllowedError(f"no password given for {by.strip()}: run this at a terminal, or set {PASSWORD_ENV}") from None
    from pipelines.newsroom.access.sessions import SignInThrottle, check_credentials  # SQLAlchemy: only when needed
    from pipelines.record.store import RunStore

    settings = AppSettings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = RunStore(settings.sqlite_url).engine
    answer = check_credentials(UsersFile.load(path), SignInThrottle(engine), by, password)
    if answer.user is None:
        raise NotAllowedError(f"{answer.message} Nothing was done.")
    return require(Person.signed_in(answer.user, UsersFileRoles(path)), action)
