"""The app's pages in one list: one title per page, used alike by the navigation, the page's heading and the browser tab."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components.review_form import render_checker_name
from components.sign_in import open_desk_guard, render_signed_in, require_sign_in
from pipelines.core.errors import StoreUnavailableError

APP_NAME = "DebateDesk"
log = logging.getLogger("debatedesk.pages")


@dataclass(frozen=True)
class PageInfo:
    """A page of the app: its script, its title (the same in the navigation, its heading and the tab) and its icon."""

    path: str
    title: str
    icon: str


PAGES = (
    PageInfo("pages/verify.py", "Verify a claim", "⚖️"),
    PageInfo("pages/history.py", "History", "🗂️"),
    PageInfo("pages/replay.py", "Replay", "🎓"),
    PageInfo("pages/queue.py", "Claims queue", "📥"),
    PageInfo("pages/corpora.py", "Corpora", "📚"),
    PageInfo("pages/batch.py", "Batch", "📋"),
    PageInfo("pages/benchmark.py", "Benchmark", "📊"),
    PageInfo("pages/calibrate.py", "Calibrate", "🎯"),
    PageInfo("pages/settings.py", "Settings", "⚙️"),
)


def run_page(navigation: Any) -> None:
    """Run the chosen page. A run database that stops answering while a page reads it is said plainly, once, in place of
    what could not be read (never a traceback); what each action wrote is its own to report (they say so themselves)."""
    try:
        navigation.run()
    except (SQLAlchemyError, StoreUnavailableError) as exc:
        log.warning("a page could not read the run database: %s", exc)
        st.error(
            f"⚠️ The run database did not answer ({type(exc).__name__}), so this page cannot show the desk's record right now. "  # markup: a class name
            "Nothing stored is lost: reload the page when the database is back."
        )


def page_info(path: str) -> PageInfo:
    for info in PAGES:
        if info.path == path:
            return info
    raise KeyError(f"{path} is not a page of the app; pages: {', '.join(p.path for p in PAGES)}")


def tab_title(info: PageInfo) -> str:
    return f"{info.title} · {APP_NAME}"


def render_page_header(path: str) -> None:
    """The top of every page: its browser tab and heading, from its entry in PAGES, and the checker's name at the top of
    the sidebar (drawn by each page, not app.py, so the field is the same widget whichever way the page is run)."""
    info = page_info(path)
    st.set_page_config(page_title=tab_title(info), page_icon=info.icon)
    open_desk_guard()  # beyond this machine with nobody signing in: refused, or (DEBATEDESK_OPEN_DESK) said on every page
    user = require_sign_in()  # on a shared desk: a way to sign in until someone has, then their name
    st.title(f"{info.icon} {info.title}")  # markup: our own constants
    if user is not None:
        render_signed_in(user)
    else:
        render_checker_name()
