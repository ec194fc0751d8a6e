"""Sign-in for a shared desk: with a users file configured, every page asks who is at the desk before it shows anything,
and the signed-in name is the one every action records. Without one (one person on their own machine) nothing changes."""

from __future__ import annotations

import streamlit as st

from components import state
from components.safe_text import escape_markdown
from pipelines.config import AppSettings
from pipelines.users import User, UsersFile, UsersFileError

K = "sign_in."


def require_sign_in() -> User | None:
    """The signed-in user; the sign-in form (and nothing else of the page) while nobody is; None when sign-in is off."""
    path = AppSettings().users_file
    if path is None:
        return None
    user = state.signed_in_user()
    if user is not None:
        state.set_checker_name(user.name)  # the account's name, whatever the address or a field says
        return user
    st.title("⚖️ Sign in to DebateDesk")
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


def render_signed_in(user: User) -> None:
    """The sidebar's top line when signed in: who, as what, and a way out."""
    st.sidebar.markdown(f"👤 **{escape_markdown(user.name)}** · {user.role}")  # markup: an escaped name and a role of ours
    st.sidebar.button("Sign out", key=K + "out", on_click=state.sign_out, icon="🚪")


def _sign_in(users: UsersFile) -> None:
    username = str(st.session_state.get(K + "username", ""))
    user = users.authenticate(username, str(st.session_state.get(K + "password", "")))
    st.session_state[K + "password"] = ""  # never kept in the session
    if user is None:
        state.set_message(state.SIGN_IN_MESSAGE, ("error", "⚠️ Unknown user name or wrong password."))
        return
    state.sign_in(user)
