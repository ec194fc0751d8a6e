"""Settings page: where each role's model is served (presets, per-role fields, a connection test), how evidence is searched,
and how long step mode waits. The sidebar of Verify and Batch keeps only what changes from claim to claim."""

import streamlit as st
from pydantic import ValidationError

from components import state
from components.config_form import describe_problems, render_model_fields, render_section
from components.desk_key import render_desk_key
from components.pages import render_page_header
from pipelines.config import ROLES, AppSettings, BudgetConfig, ModelSpec, PauseConfig, RetrievalConfig, RunConfig
from pipelines.llm.connection import check_connection
from pipelines.llm.presets import PRESETS, matching_preset
from pipelines.text.safety import escape_markdown

state.ensure_framed("pages/settings.py")

K = state.settings_prefix()
render_page_header("pages/settings.py")
st.caption(
    "These settings hold for every run you start in this session, on Verify and Batch; a reload goes back to the defaults, "
    "which `DEBATEDESK_*` variables set (docs/options.md). API keys stay in this session's memory: never stored with a run, "
    "never written to disk."
)

stored = state.run_settings()
data = stored.model_dump()
for role in ROLES:
    data[role]["api_key"] = stored.role(role).api_key

st.header("Models")
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
                st.error(f"⚠️ Fix this role's settings first: {escape_markdown(describe_problems(exc))}")
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

st.header("Search")
st.caption("Web search itself is switched on and off in the sidebar, per run.")
data["retrieval"] = render_section(RetrievalConfig, data["retrieval"], K + "retrieval", skip={"web_search"}, prefixed=False)

st.header("Step mode")
st.caption("Step mode itself is switched on and off in the sidebar, per run.")
data["pauses"] = render_section(PauseConfig, data["pauses"], K + "pauses", skip={"step_mode"}, prefixed=False)

st.header("Spend limits")
st.caption(
    "A run stops cleanly between two model calls once it reaches a limit; everything so far is kept and it can be resumed from "
    "History after the limit is raised. A batch shares its own limits across its claims and starts no claim once one is reached. "
    "0 means no limit; answers from the cache are free."
)
data["budget"] = render_section(BudgetConfig, data["budget"], K + "budget", prefixed=False)

try:
    state.set_run_settings(RunConfig.model_validate(data))
except ValidationError as exc:  # keep the last valid settings: nothing typed before is lost, and runs still start
    st.error(f"⚠️ Not applied yet: {escape_markdown(describe_problems(exc))}. Runs use the last valid settings until this is fixed.")

render_desk_key(AppSettings().data_dir)

st.divider()
st.button("Reset to the defaults", on_click=state.reset_settings, icon="↩️", help="Back to the defaults (and the DEBATEDESK_* environment).")
