"""The desk's shared settings on a page: what runs use (the desk's endpoints, prices and limits over this session's
choices), who may change them, a read-only view for everyone else, the save button's callback and the audit list."""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from components import state
from components.sign_in import oidc_section
from pipelines.core.config import ROLES, AppSettings, BudgetConfig, RunConfig, describe_invalid
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import to_the_second
from pipelines.newsroom.access.users import User
from pipelines.record.store import RunSummary
from pipelines.run.desk_settings import DeskChange, DeskSettings, DeskSettingsBook, Endpoint, masked, may_change, model_name
from pipelines.run.services import Services

DESK_MESSAGE = "desk_settings.message"


def sign_in_on() -> bool:
    """Whether this desk signs people in (a users file or an OIDC provider): then only an editor changes its settings."""
    return AppSettings().users_file is not None or oidc_section() is not None


def acting_user() -> User | None:
    return state.signed_in_user()


def may_change_desk() -> bool:
    return may_change(acting_user(), sign_in=sign_in_on())


def run_settings_at_desk(services: Services) -> RunConfig:
    """The settings a run from this session starts with: the desk's endpoints, prices and limits (lower ones of the
    session's own kept), over this session's search and step-mode choices."""
    try:
        return services.desk_settings().apply(state.run_settings())
    except DebateDeskError as exc:  # the store is away: say so; the runner refuses to start without the desk's limits
        st.error(f"⚠️ {escape_markdown(str(exc))}")
        return state.run_settings()


def draft_of(config: RunConfig, desk: DeskSettings) -> DeskSettings:
    """The desk's settings as the editor's form has them now (the session's draft of models, prices and limits)."""
    endpoints = {
        role: Endpoint(**{f: getattr(config.role(role), f) for f in ("backend", "model", "base_url", "api_key")}) for role in ROLES
    }
    return desk.model_copy(update={"budget": config.budget, "endpoints": endpoints})


def save_desk(book: DeskSettingsBook, draft: DeskSettings, version: int) -> None:
    """on_click of Save: store the draft for the whole desk (refused, with the reason, unless the person may)."""
    try:
        changes = book.save(draft, user=acting_user(), sign_in=sign_in_on(), name=state.checker_name(), expected_version=version)
    except DebateDeskError as exc:
        state.set_message(DESK_MESSAGE, ("error", f"⚠️ Not saved: {escape_markdown(str(exc))}."))
        return
    word = f"{len(changes)} change{'s' if len(changes) != 1 else ''}" if changes else "nothing changed"
    state.set_message(DESK_MESSAGE, ("success", f"✅ Saved for the whole desk: {word}."))


def render_desk_message() -> None:
    message = state.take_message(DESK_MESSAGE)
    if message is not None:
        kind, text = message
        getattr(st, kind)(text)  # markup: our words and an escaped reason


def render_endpoints_read_only(desk: DeskSettings) -> None:
    """Each role's endpoint as a table; a key only by its last four characters."""
    rows = ["| role | backend | model | endpoint | API key |", "| --- | --- | --- | --- | --- |"]
    for role in ROLES:
        e = desk.endpoints.get(role, Endpoint())
        cells = [role, e.backend, model_name(e.backend, e.model), e.base_url or "(the backend's own)", masked(e.api_key.get_secret_value())]
        rows.append("| " + " | ".join(escape_markdown(c) for c in cells) + " |")
    st.markdown("\n".join(rows))  # markup: every cell escaped


def render_limits_read_only(desk: DeskSettings) -> None:
    budget = desk.budget
    st.markdown(f"**Limits:** {escape_markdown(budget.describe() or 'none')}")  # markup: escaped
    prices = ", ".join(budget.prices) or "none listed"
    st.markdown(  # markup: escaped
        f"**Prices per 1,000 tokens:** {escape_markdown(prices)} · default {budget.default_price:g}"
    )


def render_changes(changes: list[DeskChange]) -> None:
    """The audit list of the desk's settings, newest first: when, who, which setting, before and after."""
    if not changes:
        st.caption("No change yet: the desk runs on the defaults (and the DEBATEDESK_* environment).")
        return
    rows = ["| when | who | setting | before | after |", "| --- | --- | --- | --- | --- |"]
    for c in changes:
        rows.append("| " + " | ".join(escape_markdown(v) for v in (to_the_second(c.at), c.by, c.setting, c.before, c.after)) + " |")
    st.markdown("\n".join(rows))  # markup: every cell escaped


def render_resume_with_limits(run: RunSummary) -> None:
    """For a run its spend limit stopped: its limits, which an editor (or the person at a one-person desk) may raise for
    it, up to the desk's, and resume; anyone may lower them. A plain Resume keeps them."""
    stored = BudgetConfig.model_validate(run.config.get("budget", {}))
    with st.expander("🛑 Resume with other limits" + ("" if may_change_desk() else " (lower only: an editor raises them)")):
        st.caption(
            "This run keeps the limits it started with until they are raised here or an editor raises the desk's. "
            "0 means no limit; never more than the desk's."
        )
        fields = ("max_calls", "max_tokens", "max_cost")
        values = {name: _limit_input(name, getattr(stored, name), run.id) for name in fields}
        try:
            limits = stored.model_copy(update=values)
            BudgetConfig.model_validate(limits.model_dump())
        except ValidationError as exc:
            st.error(f"⚠️ {escape_markdown(describe_invalid(exc, BudgetConfig))}")
            return
        if st.button("▶️ Resume with these limits", key=f"history.resume_limits.{run.id}"):
            state.request_resume(run.id, limits)
            st.switch_page("pages/verify.py")


def _limit_input(name: str, value: float, run_id: str) -> float:
    field = BudgetConfig.model_fields[name]
    if field.annotation is int:
        return st.number_input(str(field.title), value=int(value), step=1, key=f"history.limit.{run_id}.{name}", help=field.description)
    return st.number_input(str(field.title), value=float(value), format="%g", key=f"history.limit.{run_id}.{name}", help=field.description)
