"""Sign-in sessions and the sign-in throttle, on SQLite and PostgreSQL: a cookie signs in while its session holds, sign-out
ends one session and sign-out everywhere every session of the account; repeated failures wait longer, kept in the database."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from pipelines.newsroom.access import sessions as sessions_module
from pipelines.newsroom.access.sessions import (
    ADDRESS_FREE_FAILURES,
    FREE_FAILURES,
    WRONG,
    SignInFailureRow,
    SignInSessionRow,
    SignInSessions,
    SignInThrottle,
    attempt_sign_in,
    desk_secret,
    throttle_keys,
)
from pipelines.newsroom.access.users import UsersFile
from pipelines.record.store import RunStore
from tests.fakes import users_file
from tests.stores import store_url  # noqa: F401  (the fixture: SQLite, and PostgreSQL when configured)

SECRET = b"s" * 32


@pytest.fixture
def engine(store_url: str) -> Engine:  # noqa: F811
    return RunStore(store_url).engine  # opening the store runs its migrations, which build the sign-in tables


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> UsersFile:
    return UsersFile.load(users_file(tmp_path_factory.mktemp("desk") / "users.toml"))


def test_a_session_signs_in_until_it_is_ended_and_only_its_digest_is_stored(engine: Engine) -> None:
    sessions = SignInSessions(engine, SECRET, lifetime_s=3600)
    cookie = sessions.start("ana")
    assert sessions.username(cookie) == "ana"
    assert SignInSessions(engine, SECRET, 3600).username(cookie) == "ana", "another process (same secret) reads it too"
    with Session(engine) as s:
        stored = s.scalars(select(SignInSessionRow.token_digest)).all()
    token = sessions._sessions.loads(cookie)
    assert len(stored) == 1 and token not in stored[0] and len(stored[0]) == 64
    sessions.end(cookie)
    assert sessions.username(cookie) is None


def test_sign_out_everywhere_ends_every_session_of_the_account_and_no_one_elses(engine: Engine) -> None:
    sessions = SignInSessions(engine, SECRET, lifetime_s=3600)
    laptop, phone, bo = sessions.start("ana"), sessions.start("ana"), sessions.start("bo")
    assert sessions.end_all("ana") == 2
    assert sessions.username(laptop) is None and sessions.username(phone) is None
    assert sessions.username(bo) == "bo"


def test_a_forged_an_altered_an_other_desks_or_an_expired_cookie_signs_nobody_in(engine: Engine) -> None:
    sessions = SignInSessions(engine, SECRET, lifetime_s=3600)
    cookie = sessions.start("ana")
    assert sessions.username(None) is None and sessions.username("") is None
    assert sessions.username(cookie[:-2] + ("AA" if not cookie.endswith("AA") else "BB")) is None
    assert SignInSessions(engine, b"another desk's secret".ljust(32), 3600).username(cookie) is None
    short = SignInSessions(engine, SECRET, lifetime_s=0.5)
    brief = short.start("ana")
    assert short.username(brief) == "ana"
    time.sleep(1.1)
    assert short.username(brief) is None, "expired in the database (and the signature's age too)"


def test_a_browser_cookie_is_signed_and_keeps_the_name_it_gave(engine: Engine) -> None:
    sessions = SignInSessions(engine, SECRET, lifetime_s=3600)
    cookie = sessions.new_browser()
    browser = sessions.browser(cookie)
    assert browser is not None and sessions.browser(cookie + "x") is None and sessions.browser("made-up") is None
    assert sessions.browser_name(browser) == ""
    sessions.keep_browser_name(browser, "  Ana   Ruiz ")
    assert sessions.browser_name(browser) == "Ana Ruiz"
    sessions.keep_browser_name(browser, "Ana R.")
    assert SignInSessions(engine, SECRET, 3600).browser_name(browser) == "Ana R."
    assert sessions.browser_name(sessions.browser(sessions.new_browser())) == "", "another browser has its own"


def test_failures_past_the_free_ones_wait_longer_each_time_and_the_count_is_kept(engine: Engine, users: UsersFile) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    for _ in range(FREE_FAILURES):
        assert attempt_sign_in(users, sessions, throttle, "ana", "wrong", None).message == WRONG
    assert throttle.wait_s(throttle_keys("ana", None)) == 0
    assert attempt_sign_in(users, sessions, throttle, "ana", "wrong", None).message == WRONG
    first = SignInThrottle(engine).wait_s(throttle_keys("ANA ", None))  # a new instance: read from the database
    assert 1 < first <= 2.0
    answer = attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None)
    assert answer.user is None and answer.cookie is None and "try again in 2 s" in answer.message, "the right password waits too"
    with Session(engine) as s, s.begin():  # the wait is over
        s.get(SignInFailureRow, "name:ana").locked_until = 0.0  # type: ignore[union-attr]
    attempt_sign_in(users, sessions, throttle, "ana", "wrong", None)
    assert 3 < throttle.wait_s(throttle_keys("ana", None)) <= 4.0, "the next failure waits twice as long"
    with Session(engine) as s, s.begin():
        s.get(SignInFailureRow, "name:ana").locked_until = 0.0  # type: ignore[union-attr]
    answer = attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None)
    assert answer.user is not None and answer.user.name == "Ana Ruiz" and sessions.username(answer.cookie) == "ana"
    assert (
        throttle.wait_s(throttle_keys("ana", None)) == 0 and attempt_sign_in(users, sessions, throttle, "ana", "x", None).message == WRONG
    )


def test_an_unknown_name_and_a_known_one_are_answered_and_slowed_alike(engine: Engine, users: UsersFile) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    for name in ("bo", "nobody"):
        answers = {attempt_sign_in(users, sessions, throttle, name, "wrong", None).message for _ in range(FREE_FAILURES + 1)}
        assert answers == {WRONG}
        assert throttle.wait_s(throttle_keys(name, None)) > 0


def test_one_browser_trying_many_names_is_slowed_too(engine: Engine, users: UsersFile) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    browser = sessions.browser(sessions.new_browser())
    for n in range(FREE_FAILURES + 1):
        attempt_sign_in(users, sessions, throttle, f"guess{n}", "wrong", browser)
    answer = attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", browser)
    assert answer.user is None and "Too many failed sign-ins" in answer.message
    assert attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None).user is not None, "another browser is not held up"


def test_one_address_trying_one_password_across_many_names_without_its_cookie_is_slowed(engine: Engine, users: UsersFile) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    for n in range(ADDRESS_FREE_FAILURES + 1):  # a new name each time and no browser cookie: only the address ties them
        assert attempt_sign_in(users, sessions, throttle, f"name{n}", "Spring2026!", None, "203.0.113.9").message == WRONG
    answer = attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None, "203.0.113.9")
    assert answer.user is None and "Too many failed sign-ins" in answer.message
    assert attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None, "198.51.100.4").user is not None, (
        "another address is not held up"
    )


def test_a_sign_in_that_holds_does_not_clear_its_address_s_count(engine: Engine, users: UsersFile) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    for n in range(ADDRESS_FREE_FAILURES - 1):
        attempt_sign_in(users, sessions, throttle, f"name{n}", "wrong", None, "203.0.113.9")
    assert attempt_sign_in(users, sessions, throttle, "ana", "pw-for-tests", None, "203.0.113.9").user is not None
    attempt_sign_in(users, sessions, throttle, "other", "wrong", None, "203.0.113.9")  # the address's tenth failure: still free
    assert throttle.wait_s(["address:203.0.113.9"]) == 0
    attempt_sign_in(users, sessions, throttle, "another", "wrong", None, "203.0.113.9")
    assert throttle.wait_s(["address:203.0.113.9"]) > 0, "one known account does not let the address go on guessing"


@pytest.mark.parametrize("name", ["ana\x00", "\x00", "ana\x1b[2J", "\u200b\u200b", "\u2800"])
def test_a_name_no_account_can_have_is_refused_before_the_database_sees_it(engine: Engine, users: UsersFile, name: str) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    answer = attempt_sign_in(users, sessions, throttle, name, "pw-for-tests", None, "203.0.113.9")
    assert answer.user is None and "user name" in answer.message
    with Session(engine) as s:
        assert s.scalars(select(SignInFailureRow.key)).all() == [], "nothing stored: PostgreSQL cannot even hold a NUL"


def test_the_desk_secret_is_made_once_and_readable_by_its_owner_only(tmp_path: Path) -> None:
    secret = desk_secret(tmp_path / "data")
    assert len(secret) == 32 and desk_secret(tmp_path / "data") == secret
    assert (tmp_path / "data" / sessions_module.SECRET_FILE).stat().st_mode & 0o077 == 0


def test_long_expired_sessions_and_old_failures_are_cleared_away(engine: Engine) -> None:
    sessions, throttle = SignInSessions(engine, SECRET, 3600), SignInThrottle(engine)
    old = sessions.start("ana")
    throttle.failed(["name:old"])
    with Session(engine) as s, s.begin():
        for row in s.scalars(select(SignInSessionRow)):
            row.expires_at -= sessions_module.KEEP_ENDED_S + 7200
        s.get(SignInFailureRow, "name:old").last_at -= sessions_module.KEEP_ENDED_S + 1  # type: ignore[union-attr]
    sessions.start("bo")
    throttle.failed(["name:new"])
    with Session(engine) as s:
        assert s.scalars(select(SignInSessionRow.username)).all() == ["bo"]
        assert s.scalars(select(SignInFailureRow.key)).all() == ["name:new"]
    assert sessions.username(old) is None
