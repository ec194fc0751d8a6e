"""What the browser's cookies say: its session (on a desk with a users file) and, on a desk without sign-in, the name it
gave for the audit trail. Cookies are set by the desk's HTTP routes (components/web.py); a page only reads them."""

from __future__ import annotations

import streamlit as st

from components.web import desk
from pipelines.access.sessions import BROWSER_COOKIE, SESSION_COOKIE


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
    sessions, _ = desk()
    return sessions.browser_name(sessions.browser(request_cookie(BROWSER_COOKIE)))


def remember_name(name: str) -> None:
    sessions, _ = desk()
    sessions.keep_browser_name(sessions.browser(request_cookie(BROWSER_COOKIE)), name)
