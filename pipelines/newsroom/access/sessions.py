"""Sign-ins that last, and a name per browser: server-side sessions in the run store behind signed, expiring cookies.

The tables live in the run store's database (``create_tables``). A users-file sign-in makes a session: a random token the browser keeps in an HttpOnly cookie, signed and dated by
itsdangerous with the desk's own secret (``sign_in.key`` in the data folder, made on first start), and a row in
``sign_in_sessions`` holding the token's sha256, the account, when it began, when it ends and whether it was ended early.
A cookie counts only while its signature holds, it is younger than the session's lifetime and its row is neither
expired nor revoked; so signing out (one session) or signing out everywhere (every session of the account) takes effect
at the next page action, whatever the browser still holds.

A browser cookie (signed too) names the browser without naming the person: on a desk without sign-in it keeps the name
typed for the audit trail (``browser_names``), and it is one of the keys repeated sign-in failures are counted by
(``sign_in_failures``: per user name and per browser, a lockout that grows with each failure past the first few).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import Engine, delete, select, update
from sqlalchemy.orm import Session

from pipelines.core.database.tables import BrowserNameRow, SignInFailureRow, SignInSessionRow
from pipelines.core.text.safety import is_invisible, unsafe_char
from pipelines.newsroom.access.users import User, UsersFile

SESSION_COOKIE = "debatedesk_session"
BROWSER_COOKIE = "debatedesk_browser"
SECRET_FILE = "sign_in.key"
FREE_FAILURES = 3  # failures in a row before the next attempt must wait
# One address (a person, or a newsroom behind one router) may fail more often, over every name it tries, before it waits:
# a password tried across many names, with the browser cookie dropped each time, is slowed all the same.
ADDRESS_FREE_FAILURES = 10
ADDRESS_WINDOW_S = 3600.0  # an address's failures count within an hour of each other; a sign-in never clears them
FIRST_WAIT_S = 2.0  # the wait after the first failure past the free ones; it doubles with each further failure...
MAX_WAIT_S = 300.0  # ...up to five minutes
MAX_NAME_CHARS = 80
KEEP_ENDED_S = 7 * 86400  # sessions expired, and failures last seen, longer ago than this are deleted

log = logging.getLogger("debatedesk.access")


def desk_secret(data_dir: Path) -> bytes:
    """The desk's secret for signing cookies: ``sign_in.key`` in the data folder, made (readable by its owner only) on first use."""
    path = data_dir / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SignInSessions:
    """Sessions and browser cookies of one desk (one database, one secret)."""

    def __init__(self, engine: Engine, secret: bytes, lifetime_s: float) -> None:
        self._engine = engine
        self._sessions = URLSafeTimedSerializer(secret, salt="debatedesk.session")
        self._browsers = URLSafeTimedSerializer(secret, salt="debatedesk.browser")
        self.lifetime_s = lifetime_s

    # --- sessions ---------------------------------------------------------------------

    def start(self, username: str) -> str:
        """A new session for the account; returns the cookie's value (the signed token)."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        with Session(self._engine) as s, s.begin():
            s.execute(delete(SignInSessionRow).where(SignInSessionRow.expires_at < now - KEEP_ENDED_S))  # long over: nothing to check
            s.add(SignInSessionRow(token_digest=_digest(token), username=username, created_at=now, expires_at=now + self.lifetime_s))
        return self._sessions.dumps(token)

    def username(self, cookie: str | None) -> str | None:
        """The account a cookie signs in, or None when it is missing, forged, too old, expired, revoked or unknown."""
        token = self._token(cookie)
        if token is None:
            return None
        with Session(self._engine) as s:
            row = s.get(SignInSessionRow, _digest(token))
        if row is None or row.revoked_at is not None or row.expires_at <= time.time():
            return None
        return row.username

    def end(self, cookie: str | None) -> None:
        """Sign out: this session ends now."""
        token = self._token(cookie)
        if token is not None:
            with Session(self._engine) as s, s.begin():
                s.execute(
                    update(SignInSessionRow)
                    .where(SignInSessionRow.token_digest == _digest(token), SignInSessionRow.revoked_at.is_(None))
                    .values(revoked_at=time.time())
                )

    def end_all(self, username: str) -> int:
        """Sign out everywhere: every open session of the account ends now; returns how many."""
        now = time.time()
        with Session(self._engine) as s, s.begin():
            result = s.execute(
                update(SignInSessionRow)
                .where(SignInSessionRow.username == username, SignInSessionRow.revoked_at.is_(None), SignInSessionRow.expires_at > now)
                .values(revoked_at=now)
            )
        return int(getattr(result, "rowcount", 0) or 0)

    def _token(self, cookie: str | None) -> str | None:
        if not cookie:
            return None
        try:
            token = self._sessions.loads(cookie, max_age=math.ceil(self.lifetime_s))
        except BadSignature:  # also SignatureExpired: a cookie older than a session lasts
            return None
        return token if isinstance(token, str) else None

    # --- browsers ---------------------------------------------------------------------

    def new_browser(self) -> str:
        """A browser cookie's value: a random id, signed so a made-up one is refused."""
        return self._browsers.dumps(secrets.token_urlsafe(24))

    def browser(self, cookie: str | None) -> str | None:
        """The browser's key (a digest of its id) when its cookie is one this desk signed, else None."""
        if not cookie:
            return None
        try:
            browser_id = self._browsers.loads(cookie)
        except BadSignature:
            return None
        return _digest(browser_id) if isinstance(browser_id, str) else None

    def browser_name(self, browser: str | None) -> str:
        """The name this browser last gave for the audit trail (a desk without sign-in), or ""."""
        if browser is None:
            return ""
        with Session(self._engine) as s:
            row = s.get(BrowserNameRow, browser)
        return row.name if row is not None else ""

    def keep_browser_name(self, browser: str | None, name: str) -> None:
        if browser is None:
            return
        name = " ".join(name.split())[:MAX_NAME_CHARS]
        with Session(self._engine) as s, s.begin():
            row = s.get(BrowserNameRow, browser)
            if row is None:
                s.add(BrowserNameRow(browser_digest=browser, name=name, updated_at=time.time()))
            else:
                row.name, row.updated_at = name, time.time()


class SignInThrottle:
    """Failed sign-ins counted per user name and per browser; past the first few, each attempt waits longer.

    Kept in the database, so a reload, a new tab or another server process does not reset the count."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def wait_s(self, keys: list[str]) -> float:
        """Seconds before any of these keys may try again (0 when none is locked)."""
        now = time.time()
        with Session(self._engine) as s:
            until = s.scalars(select(SignInFailureRow.locked_until).where(SignInFailureRow.key.in_(keys))).all()
        return max([u - now for u in until] + [0.0])

    def failed(self, keys: list[str]) -> None:
        now = time.time()
        with Session(self._engine) as s, s.begin():
            s.execute(delete(SignInFailureRow).where(SignInFailureRow.last_at < now - KEEP_ENDED_S, SignInFailureRow.locked_until < now))
            for key in keys:
                by_address = key.startswith(ADDRESS_KEY)
                row = s.get(SignInFailureRow, key)
                if row is None:
                    row = SignInFailureRow(key=key, failures=0, last_at=now, locked_until=0.0)
                    s.add(row)
                if by_address and row.last_at < now - ADDRESS_WINDOW_S:  # an hour quiet: the address starts afresh
                    row.failures = 0
                row.failures += 1
                row.last_at = now
                past = row.failures - (ADDRESS_FREE_FAILURES if by_address else FREE_FAILURES)
                if past > 0:
                    row.locked_until = now + min(FIRST_WAIT_S * 2 ** (past - 1), MAX_WAIT_S)

    def succeeded(self, keys: list[str]) -> None:
        """A sign-in that held clears its name's and browser's count; not its address's (one known account must not
        let an address go on guessing others')."""
        with Session(self._engine) as s, s.begin():
            s.execute(delete(SignInFailureRow).where(SignInFailureRow.key.in_([k for k in keys if not k.startswith(ADDRESS_KEY)])))


@dataclass(frozen=True)
class SignInAnswer:
    """What a sign-in attempt gives: the user and the session cookie, or a message that is the same for a wrong name and a
    wrong password."""

    user: User | None
    cookie: str | None
    message: str


WRONG = "Unknown user name or wrong password."


ADDRESS_KEY = "address:"


def throttle_keys(username: str, browser: str | None, address: str | None = None) -> list[str]:
    keys = ["name:" + " ".join(username.split()).lower()[:200]]
    keys += ["browser:" + browser] if browser else []
    return [*keys, ADDRESS_KEY + address[:100]] if address else keys


def name_problem(username: str) -> str | None:
    """Why a typed user name cannot be any account's (a NUL or another control character, or nothing visible), or None.
    Answered before the throttle or the database see it: PostgreSQL cannot even store a NUL."""
    if unsafe_char(username) is not None:
        return "A user name holds no control characters; type your user name as the desk gave it."
    if username and is_invisible(username):
        return "That user name has no visible characters; type your user name as the desk gave it."
    return None


def check_credentials(
    users: UsersFile, throttle: SignInThrottle, username: str, password: str, browser: str | None = None, address: str | None = None
) -> SignInAnswer:
    """Check a user name and password: throttled per name, per browser and per address (over every name it tries),
    answered alike, and in the same time, for an unknown name and a wrong password. No session: the command line acts once
    with the credentials it was given."""
    if (problem := name_problem(username)) is not None:
        return SignInAnswer(None, None, problem)
    keys = throttle_keys(username, browser, address)
    wait = throttle.wait_s(keys)
    if wait > 0:
        log.warning("sign-in refused while locked: %s", keys)
        return SignInAnswer(None, None, f"Too many failed sign-ins: try again in {math.ceil(wait)} s.")
    user = users.authenticate(username, password)
    if user is None:
        throttle.failed(keys)
        log.warning("sign-in failed: %s", keys)
        return SignInAnswer(None, None, WRONG)
    throttle.succeeded(keys)
    return SignInAnswer(user, None, "")


def attempt_sign_in(
    users: UsersFile,
    sessions: SignInSessions,
    throttle: SignInThrottle,
    username: str,
    password: str,
    browser: str | None,
    address: str | None = None,
) -> SignInAnswer:
    """``check_credentials``, and a session when they hold. Blocking (bcrypt, the database): call it from a worker thread."""
    answer = check_credentials(users, throttle, username, password, browser, address)
    if answer.user is None:
        return answer
    return SignInAnswer(answer.user, sessions.start(answer.user.username), "")
