"""Sign-in for a shared desk: with a users file configured, or an OpenID Connect provider (an ``[auth]`` section in
``.streamlit/secrets.toml``, signed in through Streamlit's own ``st.login``), every page asks who is at the desk before it
shows anything, and the signed-in person is the one every action records and checks. Without either (one person on their
own machine) nobody signs in, and the name the person gives is kept per browser.

Staying signed in: a users-file sign-in is a session in the run store whose signed token the browser keeps in an HttpOnly
cookie, set by the desk's sign-in form (components/web.py); each page run reads the cookie, asks the store whether the
session still holds, and reads the account's role from the users file again. An OIDC sign-in lasts in Streamlit's own
signed identity cookie (30 days, or until Sign out)."""

from __future__ import annotations

import html
import ipaddress
from collections.abc import Mapping
from typing import Any

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components import identity, state
from components.web import SIGN_IN_PATH, desk
from pipelines.core.config import AppSettings
from pipelines.core.text.safety import escape_markdown
from pipelines.newsroom.access.roles import NotAllowedError, OidcRoles, Person, UsersFileRoles
from pipelines.newsroom.access.sessions import BROWSER_COOKIE
from pipelines.newsroom.access.users import User, UsersFile, UsersFileError, oidc_user

K = "sign_in."
TITLE = "⚖️ Sign in to DebateDesk"
AUTH_KEYS = ("redirect_uri", "cookie_secret")  # what st.login needs in [auth] itself
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")  # ...and for each provider
NOT_PROVIDERS = ("client_kwargs",)  # a dict in [auth] that is not a named provider


def require_sign_in() -> User | None:
    """The signed-in user, as the users file (or the OIDC lists) says now; a way to sign in (and nothing else of the page)
    while nobody is; None when sign-in is off."""
    auth = oidc_section()
    if auth is not None:
        return _require_oidc(auth)
    path = AppSettings().users_file
    if path is None:
        return None
    try:
        users = UsersFile.load(path)  # read again on every page run: a demotion or a removal holds from the next action
    except UsersFileError as exc:  # nobody can act until the file is fixed: say how
        st.title(TITLE)  # markup: our own constant
        st.error(f"⚠️ {escape_markdown(str(exc))}")
        st.stop()
    try:
        account = identity.signed_in_account()
    except SQLAlchemyError:  # the database went away: nobody can be recognised until it is back
        st.title(TITLE)  # markup: our own constant
        st.error("⚠️ The desk's database cannot be reached just now, so your sign-in cannot be checked. Reload in a moment.")
        st.stop()
    user = users.user(account) if account is not None else None
    if user is None:
        state.sign_out()
        st.title(TITLE)  # markup: our own constant
        note = state.take_message(state.SIGN_IN_MESSAGE)
        if note is not None:
            st.info(note[1])  # markup: our own message
        elif account is not None:
            st.warning(f"⚠️ {escape_markdown(account)} is no longer on this desk's list of users. Ask whoever runs the desk.")
        elif identity.request_cookie(BROWSER_COOKIE) is None:  # no desk routes gave this browser its cookie
            st.warning(
                "⚠️ This app was started without the desk's sign-in routes, so nobody can sign in. Start it with "
                "`streamlit run server.py` (as `make run` does), not `app.py`."
            )
        else:
            st.info("Your sign-in has ended (it expired, or you signed out here or on another page).")
        render_sign_in_link()
        st.stop()
    assert user is not None
    state.sign_in(user)  # the account's name and role as the file says now, whatever the page held before
    return user


def render_sign_in_link() -> None:
    """A link to the desk's sign-in form, in this tab (the form sets the session cookie, which only a page load can; a
    Markdown link would open a new tab)."""
    st.html(f'<p style="font-size:1.1rem"><a href="{html.escape(SIGN_IN_PATH)}">Sign in</a></p>')  # markup: our own constant
    st.caption("This desk is shared: what you do is recorded with your name. Ask whoever runs it for an account.")


def acting_person() -> Person:
    """Who is acting now: the signed-in person (whose role ``require`` reads again at the action), or on a desk without
    sign-in the name this browser gave.

    A users-file session is checked again here too: a callback runs before the page does, so a session ended meanwhile
    (signed out everywhere, expired) must not act once more. NotAllowedError then, which every action reports."""
    user = state.signed_in_user()
    settings = AppSettings()
    if oidc_section() is not None:
        if user is None:
            raise NotAllowedError("nobody is signed in on this page: sign in again")
        return Person.signed_in(user, OidcRoles(settings.oidc_editors, settings.oidc_checkers))
    if settings.users_file is None:
        return Person.on_open_desk(state.checker_name())
    try:
        account = identity.signed_in_account()
    except SQLAlchemyError as exc:
        raise NotAllowedError("the desk's database cannot be reached, so your sign-in cannot be checked; nothing was done") from exc
    if user is None or account != user.username:
        raise NotAllowedError("your sign-in has ended (you signed out, here or everywhere, or it expired): reload and sign in again")
    return Person.signed_in(user, UsersFileRoles(settings.users_file))


def acting_user() -> User | None:
    """Who is acting, and as what: the one place a desk action (queue, comments, review, publishing) takes its person from.

    The person ``acting_person`` says, with the role read again now (a demotion holds at the next action). On a desk
    without sign-in (one person on their own machine): the name typed in the sidebar, holding every role, as an editor.
    None while nobody is signed in, the sign-in has ended, or no name is given. Never a form field's or the address's
    say: the queue's actions check this person's role themselves (``pipelines.newsroom``).
    """
    try:
        person = acting_person()
        if person.roles is None or person.account is None:
            return User(username=person.name.lower(), name=person.name, role="editor") if person.name else None
        return person.roles.current(person.account)
    except NotAllowedError:
        return None


def render_signed_in(user: User) -> None:
    """The sidebar's top line when signed in: who, as what, and the ways out."""
    st.sidebar.markdown(f"👤 **{escape_markdown(user.name)}** · {user.role}")  # markup: an escaped name and a role of ours
    st.sidebar.button("Sign out", key=K + "out", on_click=_sign_out, icon="🚪")
    if oidc_section() is None:
        st.sidebar.button(
            "Sign out everywhere",
            key=K + "out.all",
            on_click=_sign_out_everywhere,
            args=(user.username,),
            help="Ends every session of your account: other browsers and machines ask you to sign in again at their next step.",
        )


def open_desk_guard() -> None:
    """On a desk without sign-in: refuse to serve beyond this machine unless DEBATEDESK_OPEN_DESK says so, and then say so
    on every page."""
    if oidc_section() is not None or AppSettings().users_file is not None:
        return
    address = listening_address()
    if _is_loopback(address):
        return
    where = address or "every network interface"
    if AppSettings().open_desk:
        st.warning(  # markup: an address from the server's own config
            f"🔓 **Open desk**: this app listens on {escape_markdown(where)} and nobody signs in, so anyone who can reach it can "
            "run claims, spend and override verdicts under any name (DEBATEDESK_OPEN_DESK=1)."
        )
        return
    st.error(  # markup: an address from the server's own config
        f"⚠️ This app listens on {escape_markdown(where)} and nobody signs in: anyone who could reach it could run claims, spend "
        "and override verdicts. Restart it on 127.0.0.1 (`make run` does), configure sign-in (DEBATEDESK_USERS_FILE), or set "
        "DEBATEDESK_OPEN_DESK=1 to open it anyway."
    )
    st.stop()


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:  # "" (every interface) or a host name
        return False


def listening_address() -> str:
    """The address the server listens on ("" for every interface, Streamlit's own default)."""
    return str(st.get_option("server.address") or "")


def _sign_out() -> None:
    sessions, _ = desk()
    sessions.end(identity.session_cookie())
    state.sign_out()
    state.set_message(state.SIGN_IN_MESSAGE, ("info", "You have signed out."))
    if oidc_section() is not None:
        st.logout()  # Streamlit's identity cookie goes too


def _sign_out_everywhere(username: str) -> None:
    sessions, _ = desk()
    ended = sessions.end_all(username)
    state.sign_out()
    state.set_message(state.SIGN_IN_MESSAGE, ("info", f"You have signed out everywhere ({ended} session{'s' * (ended != 1)} ended)."))


# --- OpenID Connect through st.login --------------------------------------------------


def oidc_section() -> Mapping[str, Any] | None:
    """The ``[auth]`` section of the app's secrets, when the desk signs in through an OIDC provider."""
    try:
        auth = st.secrets.get("auth")
    except FileNotFoundError:  # no secrets file at all: the usual one-person desk
        return None
    return auth if isinstance(auth, Mapping) else None


def oidc_providers(auth: Mapping[str, Any]) -> list[str | None]:
    """The named providers (``[auth.google]``...), or ``[None]`` for the one configured in ``[auth]`` itself."""
    named = [str(k) for k, v in auth.items() if isinstance(v, Mapping) and k not in NOT_PROVIDERS]
    return list(named) or [None]


def oidc_problems(auth: Mapping[str, Any]) -> list[str]:
    """What st.login would fail on, said before anyone presses the button (the provider itself cannot be checked offline)."""
    problems = [f"[auth] has no {key}" for key in AUTH_KEYS if not auth.get(key)]
    for provider in oidc_providers(auth):
        section = auth if provider is None else auth[provider]
        where = "[auth]" if provider is None else f"[auth.{provider}]"
        problems += [f"{where} has no {key}" for key in PROVIDER_KEYS if not section.get(key)]
    settings = AppSettings()
    if not settings.oidc_editors and not settings.oidc_checkers:
        problems.append("nobody may sign in: set DEBATEDESK_OIDC_EDITORS and/or DEBATEDESK_OIDC_CHECKERS (addresses or @domain)")
    return problems


def _require_oidc(auth: Mapping[str, Any]) -> User | None:
    if st.user.is_logged_in:
        settings = AppSettings()
        user = oidc_user(st.user.to_dict(), settings.oidc_editors, settings.oidc_checkers)
        if user is not None:
            state.sign_in(user)
            return user
        st.title(TITLE)  # markup: our own constant
        st.error(  # markup: the address is escaped
            f"⚠️ {escape_markdown(str(st.user.get('email') or 'This account'))} is not on this desk's list of editors or checkers "
            "(or the provider has not verified the address). Ask whoever runs the desk to add you."
        )
        st.button("Sign out", key=K + "oidc.out", on_click=_sign_out, icon="🚪")
        st.stop()
    st.title(TITLE)  # markup: our own constant
    problems = oidc_problems(auth)
    if problems:
        st.error(f"⚠️ Sign-in is configured but incomplete: {escape_markdown('; '.join(problems))}. See .streamlit/secrets.toml.")
        st.stop()
    for provider in oidc_providers(auth):
        label = f"Sign in with {escape_markdown(provider)}" if provider else "Sign in with your organisation's account"
        st.button(label, key=f"{K}oidc.{provider or 'default'}", type="primary", on_click=st.login, args=(provider,) if provider else ())
    st.caption("This desk is shared: what you do is recorded with your name. You stay signed in on this browser until you sign out.")
    st.stop()
    return None  # st.stop() does not return
