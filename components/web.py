"""The desk's own HTTP routes beside Streamlit's (served together by server.py through ``st.App``): the users-file sign-in
and sign-out, which set and clear the session cookie, and a middleware that gives each browser its cookie and sends a page
load with no live sign-in to the sign-in form.

A Streamlit script cannot set a cookie: only an HTTP response can. So the password is posted to ``/desk/sign-in``, a
plain HTML form (no script), and the answer sets an HttpOnly, SameSite=Lax cookie holding the session's signed token;
the pages read it back through ``st.context.cookies`` and ask the database whether the session still holds.
"""

from __future__ import annotations

import functools
import html
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipelines.core.config import AppSettings
from pipelines.core.errors import StoreUnavailableError
from pipelines.newsroom.access.sessions import (
    BROWSER_COOKIE,
    SESSION_COOKIE,
    SignInSessions,
    SignInThrottle,
    attempt_sign_in,
    desk_secret,
    name_problem,
)
from pipelines.newsroom.access.users import UsersFile, UsersFileError
from pipelines.record.store import RunStore

SIGN_IN_PATH = "/desk/sign-in"
SIGN_OUT_PATH = "/desk/sign-out"
NOT_PAGES = ("/_stcore/", "/static/", "/desk/", "/auth/", "/media/", "/component/", "/app/static/", "/favicon")
BROWSER_COOKIE_DAYS = 400  # the longest a browser keeps a cookie
MAX_FORM_BYTES = 4096

log = logging.getLogger("debatedesk.access")
DATABASE_AWAY = (SQLAlchemyError, StoreUnavailableError)  # gone mid-request, or not reachable when the store was opened


@functools.lru_cache(maxsize=4)
def _desk(database_url: str, data_dir: str, session_hours: float) -> tuple[SignInSessions, SignInThrottle]:
    from pathlib import Path

    Path(data_dir).mkdir(parents=True, exist_ok=True)  # the secret, and a SQLite database, live there
    engine = RunStore(database_url).engine
    return SignInSessions(engine, desk_secret(Path(data_dir)), session_hours * 3600), SignInThrottle(engine)


def desk(settings: AppSettings | None = None) -> tuple[SignInSessions, SignInThrottle]:
    """The desk's sessions and sign-in throttle (one per database in this process, shared by the routes and the pages)."""
    settings = settings or AppSettings()
    return _desk(settings.sqlite_url, str(settings.data_dir.resolve()), settings.session_hours)


def oidc_configured() -> bool:
    """Whether the desk signs in through an OIDC provider (an [auth] section in the secrets) rather than a users file."""
    import streamlit as st

    try:
        return isinstance(st.secrets.get("auth"), Mapping)
    except FileNotFoundError:
        return False


def local_path(target: str | None) -> str:
    """Where to go after signing in: a path on this server, never another site ("//evil.example" is not a path here)."""
    target = target or "/"
    parts = urlsplit(target)
    if not target.startswith("/") or target.startswith("//") or parts.scheme or parts.netloc or "\\" in target:
        return "/"
    return target


# --- the sign-in form -------------------------------------------------------------------

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · DebateDesk</title>
<style>
body {{ font-family: "Source Sans Pro", system-ui, sans-serif; background: #fff; color: #31333f; margin: 0; }}
main {{ max-width: 26rem; margin: 4rem auto; padding: 0 1rem; }}
h1 {{ font-size: 2rem; margin-bottom: 1.5rem; }}
label {{ display: block; margin: 1rem 0 .3rem; font-size: .9rem; }}
input[type=text], input[type=password] {{ width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem;
  border: 1px solid #d6d6d9; border-radius: .5rem; background: #f0f2f6; }}
button {{ margin-top: 1.5rem; padding: .5rem 1.2rem; font-size: 1rem; border: 0; border-radius: .5rem; background: #ff4b4b;
  color: #fff; cursor: pointer; }}
.error {{ background: #ffecec; color: #7d1a1a; padding: .8rem 1rem; border-radius: .5rem; }}
.note {{ color: #6b6d78; font-size: .85rem; margin-top: 1.5rem; }}
</style></head>
<body><main>
<h1>⚖️ Sign in to DebateDesk</h1>
{message}
<form method="post" action="{action}">
<input type="hidden" name="next" value="{next}">
<label for="username">User name</label>
<input type="text" id="username" name="username" maxlength="100" autocomplete="username" value="{username}" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" maxlength="200" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p class="note">This desk is shared: what you do is recorded with your name. You stay signed in on this browser for
{hours} or until you sign out. Ask whoever runs the desk for an account.</p>
</main></body></html>
"""


def _form(next_path: str, *, message: str = "", username: str = "", status: int = 200) -> HTMLResponse:
    hours = AppSettings().session_hours
    text = _PAGE.format(
        message=f'<p class="error" role="alert">⚠️ {html.escape(message)}</p>' if message else "",
        action=html.escape(SIGN_IN_PATH),
        next=html.escape(local_path(next_path)),
        username=html.escape(username[:100]),
        hours=html.escape(f"{hours:g} hours" if hours != 1 else "an hour"),
    )
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY"})


async def _sign_in_page(request: Request) -> Response:
    settings = AppSettings()
    if settings.users_file is None or oidc_configured():
        return RedirectResponse("/", status_code=303)
    return _form(request.query_params.get("next", "/"))


def _same_origin(request: Request) -> bool:
    """A form posted from this desk's own page: a browser names the page's origin on every POST (a login forged from another
    site would carry that site's), and says whether the request crossed sites (``Sec-Fetch-Site``)."""
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None  # an old client sends none; "null" is a sandboxed or privacy-stripped page
    host = request.headers.get("host", "")
    return urlsplit(origin).netloc == host


async def _form_fields(request: Request) -> dict[str, str]:
    body = await request.body()
    fields = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", errors="replace"), keep_blank_values=True)
    return {k: v[0] for k, v in fields.items() if v}


async def _sign_in(request: Request) -> Response:
    try:
        return await _check_sign_in(request)
    except DATABASE_AWAY as exc:  # the database went away: nobody is signed in, and the person is told
        log.error("sign-in refused, the database cannot be reached: %s", exc)
        return UNREACHABLE


async def _check_sign_in(request: Request) -> Response:
    settings = AppSettings()
    if settings.users_file is None or oidc_configured():
        return RedirectResponse("/", status_code=303)
    fields = await _form_fields(request)
    next_path, username = local_path(fields.get("next")), fields.get("username", "")[:100]
    if not _same_origin(request):
        return _form(next_path, message="This form was sent from another site; sign in from the desk's own page.", status=403)
    if (problem := name_problem(username)) is not None:  # a NUL, a control character, nothing visible: no account has it
        return _form(next_path, message=problem, status=400)
    try:
        users = UsersFile.load(settings.users_file)
    except UsersFileError as exc:  # nobody can sign in until the file is fixed: say how
        return _form(next_path, message=str(exc), status=503)
    sessions, throttle = desk(settings)
    browser = sessions.browser(request.cookies.get(BROWSER_COOKIE))
    address = request.client.host if request.client else None
    # bcrypt takes about 0.3 s by design: in a worker thread, so every other page and socket of the server goes on meanwhile
    answer = await run_in_threadpool(attempt_sign_in, users, sessions, throttle, username, fields.get("password", ""), browser, address)
    if answer.cookie is None:
        return _form(next_path, message=answer.message, username=username, status=429 if "try again" in answer.message else 401)
    response = RedirectResponse(next_path, status_code=303)
    _set_cookie(response, request, SESSION_COOKIE, answer.cookie, max_age=int(sessions.lifetime_s))
    return response


async def _sign_out(request: Request) -> Response:
    """Ends this browser's session (the page's own Sign out does the same, and this also clears the cookie). A sign-out
    posted from another site is refused whole: it neither ends the session nor clears the member's cookie."""
    if not _same_origin(request):
        return HTMLResponse(
            "<!doctype html><title>DebateDesk</title><p>⚠️ This sign-out was sent from another site, so nothing was done. "
            "Sign out from the desk's own page.</p>",
            status_code=403,
            headers={"Cache-Control": "no-store"},
        )
    sessions, _ = desk()
    await run_in_threadpool(sessions.end, request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse(SIGN_IN_PATH, status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


def _set_cookie(response: Response, request: Request, name: str, value: str, *, max_age: int) -> None:
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="lax", secure=secure)


UNREACHABLE = HTMLResponse(
    "<!doctype html><title>DebateDesk</title><p>⚠️ The desk's database cannot be reached just now, so nobody can sign in or "
    "be recognised. Try again in a moment; if it lasts, tell whoever runs the desk.</p>",
    status_code=503,
    headers={"Cache-Control": "no-store", "Retry-After": "10"},
)

ROUTES = [
    Route(SIGN_IN_PATH, _sign_in_page, methods=["GET"]),
    Route(SIGN_IN_PATH, _sign_in, methods=["POST"]),
    Route(SIGN_OUT_PATH, _sign_out, methods=["POST"]),
]


# --- every page load ---------------------------------------------------------------------


class DeskMiddleware:
    """On each page load (not Streamlit's own requests): give a browser without one its browser cookie, and with a users
    file, send a browser with no live session to the sign-in form (the page itself checks again on every action)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not _is_page(scope):
            await self.app(scope, receive, send)
            return
        try:
            await self._page_load(scope, receive, send)
        except DATABASE_AWAY as exc:  # the database went away (or never came): say so plainly, keep nothing half-done
            log.error("page load refused, the database cannot be reached: %s", exc)
            await UNREACHABLE(scope, receive, send)

    async def _page_load(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        settings = AppSettings()
        sessions, _ = desk(settings)
        set_cookies: list[str] = []
        if sessions.browser(request.cookies.get(BROWSER_COOKIE)) is None:
            holder = Response()
            _set_cookie(holder, request, BROWSER_COOKIE, sessions.new_browser(), max_age=BROWSER_COOKIE_DAYS * 86400)
            set_cookies += holder.headers.getlist("set-cookie")
        if settings.users_file is not None and not oidc_configured() and sessions.username(request.cookies.get(SESSION_COOKIE)) is None:
            target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
            response = RedirectResponse(f"{SIGN_IN_PATH}?next={quote(target, safe='')}", status_code=303)
            if request.cookies.get(SESSION_COOKIE):
                response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
            for cookie in set_cookies:
                response.headers.append("set-cookie", cookie)
            await response(scope, receive, send)
            return

        async def send_with_cookies(message: Message) -> None:
            if message["type"] == "http.response.start" and set_cookies:
                headers = MutableHeaders(scope=message)
                for cookie in set_cookies:
                    headers.append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_with_cookies)


def _is_page(scope: Scope) -> bool:
    path = str(scope.get("path", ""))
    accept = dict(_headers(scope)).get("accept", "")
    return "text/html" in accept and not path.startswith(NOT_PAGES)


def _headers(scope: Scope) -> list[tuple[str, str]]:
    raw: Any = scope.get("headers") or []
    return [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw]
