"""Sign-in for a shared desk: with a users file configured, or an OpenID Connect provider (an ``[auth]`` section in
``.streamlit/secrets.toml``, signed in through Streamlit's own ``st.login``), every page asks who is at the desk before it
shows anything, and the signed-in name is the one every action records. Without either (one person on their own machine)
nothing changes.

Staying signed in after a reload: Streamlit keeps an OIDC sign-in in its own signed identity cookie (30 days, or until
Sign out). A users-file sign-in lasts as long as the browser session: Streamlit gives an app no way to set a cookie of its
own, and a token in the page's address would travel with every copied link, so none is kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from components import state
from pipelines.access.users import User, UsersFile, UsersFileError, oidc_user
from pipelines.config import AppSettings
from pipelines.text.safety import escape_markdown

K = "sign_in."
TITLE = "⚖️ Sign in to DebateDesk"
AUTH_KEYS = ("redirect_uri", "cookie_secret")  # what st.login needs in [auth] itself
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")  # ...and for each provider
NOT_PROVIDERS = ("client_kwargs",)  # a dict in [auth] that is not a named provider


def require_sign_in() -> User | None:
    """The signed-in user; the sign-in form (and nothing else of the page) while nobody is; None when sign-in is off."""
    auth = oidc_section()
    if auth is not None:
        return _require_oidc(auth)
    path = AppSettings().users_file
    if path is None:
        return None
    user = state.signed_in_user()
    if user is not None:
        state.set_checker_name(user.name)  # the account's name, whatever the address or a field says
        return user
    st.title(TITLE)  # markup: our own constant
    try:
        users = UsersFile.load(path)
    except UsersFileError as exc:  # nobody can sign in until the file is fixed: say how
        st.error(f"⚠️ {escape_markdown(str(exc))}")
        st.stop()
    error = state.take_message(state.SIGN_IN_MESSAGE)
    if error is not None:
        st.error(error[1])  # markup: our own message
    with st.form(K + "form"):
        st.text_input("User name", key=K + "username", max_chars=100)
        st.text_input("Password", key=K + "password", type="password", max_chars=200)
        st.form_submit_button("Sign in", type="primary", on_click=_sign_in, args=(users,))
    st.caption("This desk is shared: what you do is recorded with your name. Ask whoever runs it for an account.")
    st.stop()
    return None  # st.stop() does not return


def acting_user() -> User | None:
    """Who is acting, and as what: the one place a desk action (queue, comments, review, publishing) takes its person from.

    Signed in: the account and its role. On a desk without sign-in (one person on their own machine): the name typed in
    the sidebar, holding every role, as an editor. None while nobody is signed in or no name is given. Never a form field's
    or the address's say: the queue's actions check this person's role themselves (``pipelines.newsroom``).
    """
    user = state.signed_in_user()
    if user is not None:
        return user
    if oidc_section() is not None or AppSettings().users_file is not None:
        return None
    name = state.checker_name()
    return User(username=name.lower(), name=name, role="editor") if name else None


def render_signed_in(user: User) -> None:
    """The sidebar's top line when signed in: who, as what, and a way out."""
    st.sidebar.markdown(f"👤 **{escape_markdown(user.name)}** · {user.role}")  # markup: an escaped name and a role of ours
    st.sidebar.button("Sign out", key=K + "out", on_click=_sign_out, icon="🚪")


def _sign_out() -> None:
    state.sign_out()
    if oidc_section() is not None:
        st.logout()  # Streamlit's identity cookie goes too


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
            st.session_state[state.SIGNED_IN] = user
            state.set_checker_name(user.name)
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


def _sign_in(users: UsersFile) -> None:
    username = str(st.session_state.get(K + "username", ""))
    user = users.authenticate(username, str(st.session_state.get(K + "password", "")))
    st.session_state[K + "password"] = ""  # never kept in the session
    if user is None:
        state.set_message(state.SIGN_IN_MESSAGE, ("error", "⚠️ Unknown user name or wrong password."))
        return
    state.sign_in(user)
