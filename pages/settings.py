"""Settings page: the desk's shared settings (where each role's model is served, prices and spend limits; changed by
editors and stored in the run database), and this session's own (how evidence is searched, how long step mode waits).
The sidebar of Verify and Batch keeps only what changes from claim to claim."""

import streamlit as st
from pydantic import ValidationError

from components import state
from components.config_form import describe_problems, render_model_fields, render_section
from components.desk import (
    draft_of,
    may_change_desk,
    render_changes,
    render_desk_message,
    render_endpoints_read_only,
    render_limits_read_only,
    save_desk,
)
from components.desk_key import render_desk_key
from components.pages import render_page_header
from components.resources import get_services
from pipelines.core.config import ROLES, AppSettings, BudgetConfig, ModelSpec, PauseConfig, RetrievalConfig, RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.run.desk_settings import DeskSettings
from pipelines.run.llm.connection import check_connection
from pipelines.run.llm.presets import PRESETS, matching_preset

state.ensure_framed("pages/settings.py")

services = get_services()
book = services.desk_book()
try:
    desk = services.desk_settings()
except DebateDeskError as exc:  # the stored settings cannot be read: say so, and show the defaults
    st.error(f"⚠️ {escape_markdown(str(exc))}")
    desk = DeskSettings.defaults()
editable = may_change_desk() and book is not None
if state.desk_version() != desk.version:  # first visit, or another editor saved since: the form starts from the desk's
    first = state.desk_version() is None
    state.set_run_settings(desk.apply(state.run_settings()))
    state.set_desk_version(desk.version)
    if not first:
        state.redraw_settings()
K = state.settings_prefix()
render_page_header("pages/settings.py")
st.caption(
    "**Models, prices and spend limits are the desk's**: stored in the run database, the same for everyone here and for the "
    "command line. "
    + ("You may change them; each change is recorded with your name. " if editable else "Only an editor changes them. ")
    + "**Search and step mode** hold for your runs in this session; a reload goes back to the defaults, which `DEBATEDESK_*` "
    "variables set (docs/options.md). API keys are kept encrypted and shown only by their last four characters."
)

stored = state.run_settings()
data = stored.model_dump()
for role in ROLES:
    data[role]["api_key"] = stored.role(role).api_key

st.header("Models")
if not editable:
    render_endpoints_read_only(desk)
else:
    current = matching_preset(stored)
    names = list(PRESETS)
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    choice = left.selectbox(
        "Preset",
        names,
        index=names.index(current) if current else 0,
        format_func=lambda n: PRESETS[n].title,
        key=K + "preset",
        help="Puts every role on one backend and endpoint; change a single role in its tab below.",
    )
    right.button("Apply to every role", on_click=state.choose_preset, args=(choice,), type="primary", icon="🧩")
    st.caption(PRESETS[choice].description)  # markup: our own constants
    if current is None:
        st.caption("The roles are on different backends or endpoints now.")

    for role, tab in zip(ROLES, st.tabs([str(RunConfig.model_fields[r].title) for r in ROLES]), strict=True):
        with tab:
            data[role] = render_model_fields(stored.role(role), f"{K}model.{role}")
            if st.button(
                "Test connection", key=f"{K}test.{role}", icon="🔌", help="Asks the endpoint for its models (5 s at most); no model runs."
            ):
                try:
                    spec = ModelSpec.model_validate(data[role])
                except ValidationError as exc:
                    st.error(f"⚠️ Fix this role's settings first: {escape_markdown(describe_problems(exc, ModelSpec))}")
                else:
                    with st.spinner("Testing the connection…"):
                        state.set_connection_report(role, check_connection(spec, AppSettings()))
            report = state.connection_report(role)
            if report is not None:
                where = f"{escape_markdown(report.endpoint)} · {report.seconds:.1f} s"
                if report.ok:
                    st.success(f"✅ {escape_markdown(report.message)}  \n{where}")  # markup: where is escaped above
                else:
                    st.error(f"❌ {escape_markdown(report.message)}  \n{where}")  # markup: where is escaped above

st.header("Spend limits and prices")
st.caption(
    "A run stops cleanly between two model calls once it reaches a limit; everything so far is kept and it can be resumed from "
    "History: it keeps the limits it started with until an editor raises the desk's. A batch shares its own limits across its "
    "claims and starts no claim once one is reached. 0 means no limit; answers from the cache are free. A money limit needs a "
    "price for every model in use."
)
if editable:
    data["budget"] = render_section(BudgetConfig, data["budget"], K + "budget", prefixed=False)
else:
    render_limits_read_only(desk)


def apply_settings(data: dict[str, object]) -> bool:
    """Keep the form's settings for this session when they are valid; else say which setting and why, keeping the last valid."""
    try:
        state.set_run_settings(RunConfig.model_validate(data))
    except ValidationError as exc:  # nothing typed before is lost, and runs still start
        st.error(f"⚠️ Not applied yet: {escape_markdown(describe_problems(exc))}. Runs use the last valid settings until this is fixed.")
        return False
    return True


valid = apply_settings(data)
if editable and book is not None:
    st.button(
        "Save models, prices and limits for the whole desk",
        key=K + "save",
        type="primary",
        icon="💾",
        on_click=save_desk,
        args=(book, draft_of(state.run_settings(), desk), desk.version),
        disabled=not valid,
        help="Stores them in the run database: every session and the command line use them from their next run. Each change is recorded.",
    )
render_desk_message()
try:
    changes = book.changes(limit=20) if book is not None else []
except DebateDeskError as exc:
    st.error(f"⚠️ {escape_markdown(str(exc))}")
    changes = []
with st.expander(f"Changes to the desk's settings ({len(changes)}{'+' if len(changes) == 20 else ''})", expanded=bool(changes)):
    render_changes(changes)

st.header("Search")
st.caption("For your runs in this session. Web search itself is switched on and off in the sidebar, per run.")
data["retrieval"] = render_section(RetrievalConfig, data["retrieval"], K + "retrieval", skip={"web_search"}, prefixed=False)

st.header("Step mode")
st.caption("For your runs in this session. Step mode itself is switched on and off in the sidebar, per run.")
data["pauses"] = render_section(PauseConfig, data["pauses"], K + "pauses", skip={"step_mode"}, prefixed=False)
if valid:
    apply_settings(data)

render_desk_key(AppSettings().data_dir)

st.divider()
st.button("Reset to the defaults", on_click=state.reset_settings, icon="↩️", help="Back to the defaults (and the DEBATEDESK_* environment).")
