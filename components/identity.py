"""What the browser's cookies say: its session (on a desk with a users file) and, on a desk without sign-in, the name it
gave for the audit trail. Cookies are set by the desk's HTTP routes (components/web.py); a page only reads them."""

from __future__ import annotations

import logging

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components.web import desk
from pipelines.newsroom.access.sessions import BROWSER_COOKIE, SESSION_COOKIE

log = logging.getLogger("debatedesk.access")


def request_cookie(name: str) -> str | None:
    """A cookie the browser sent when it opened this page's connection."""
    value = st.context.cookies.get(name)
    return str(value) if value else None


def session_cookie() -> str | None:
    return request_cookie(SESSION_COOKIE)


def signed_in_account() -> str | None:
    """The account this browser's session signs in, while the session holds (not expired, not signed out)."""
    sessions, _ = desk()
    return sessions.username(session_cookie())


def remembered_name() -> str:
    """The name this browser last gave (a desk without sign-in), kept by its cookie rather than the page's address."""
    try:
        sessions, _ = desk()
        return sessions.browser_name(sessions.browser(request_cookie(BROWSER_COOKIE)))
    except SQLAlchemyError as exc:  # the database is away: the person types the name again, nothing else is lost
        log.warning("could not read this browser's name: %s", exc)
        return ""


def remember_name(name: str) -> None:
    """Keep the name for this browser's next visit; if the database is away it is kept for this session only."""
    try:
        sessions, _ = desk()
        sessions.keep_browser_name(sessions.browser(request_cookie(BROWSER_COOKIE)), name)
    except SQLAlchemyError as exc:
        log.warning("could not keep this browser's name: %s", exc)
