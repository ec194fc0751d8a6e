"""The run settings form, generated from RunConfig: every field's title, description and bounds."""

from __future__ import annotations

import typing
from typing import Any

import streamlit as st
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from components.state import CONFIG_PREFIX
from pipelines.core.config import ROLES, BeliefConfig, ModelSpec, RunConfig, describe_invalid
from pipelines.core.database.faults import is_store_fault
from pipelines.core.text.safety import escape_markdown
from pipelines.protocols.base import get_protocol, protocol_names
from pipelines.record.store import RunFilter, RunStore
from pipelines.record.verdict_card import model_caveat
from pipelines.record.wall_time import WallTime, models_of, typical_wall_time
from pipelines.run.desk_settings import masked
from pipelines.run.llm.registry import backend_names, get_backend

BACKEND_ICONS = {"fake": "🧪", "embedded": "💻", "openai": "🌐"}
WALL_TIME_RUNS = 300  # the newest runs of every protocol read for the caption (the ones beside a run tell whether it ran alone)


def render_config_form(corpora: list[str], base: RunConfig | None = None, store: RunStore | None = None) -> RunConfig:
    """Sidebar widgets for what changes from claim to claim: the protocol and its own settings, the corpus, web search and
    step mode. Models, search and step mode's details come from ``base`` (the Settings page); returns the config of a run.
    With ``store``, the protocol's caption says how long a claim took here (``pipelines.record.wall_time``)."""
    base = base or RunConfig()
    names = protocol_names()
    protocol = st.sidebar.selectbox(
        "Protocol",
        names,
        index=names.index(base.protocol) if base.protocol in names else 0,
        format_func=lambda n: f"{n} — {get_protocol(n).title}",
        key=CONFIG_PREFIX + "protocol",
        help=RunConfig.model_fields["protocol"].description,
    )
    st.sidebar.caption(get_protocol(protocol).description)  # markup: a registered protocol's description
    if store is not None and (took := _wall_time_here(store, protocol, base)) is not None:
        st.sidebar.caption(f"⏱️ {took.describe(protocol)}")  # markup: a registered protocol's name and our numbers
    corpus = st.sidebar.selectbox(
        "Corpus",
        corpora,
        index=corpora.index(base.corpus) if base.corpus in corpora else 0,
        key=CONFIG_PREFIX + "corpus",
        help=RunConfig.model_fields["corpus"].description,
    )
    web = st.sidebar.toggle(
        "Web search", value=base.retrieval.web_search, key=CONFIG_PREFIX + "web", help=RunConfig.model_fields["retrieval"].description
    )
    step = st.sidebar.toggle(
        "Step mode",
        value=base.pauses.step_mode,
        key=CONFIG_PREFIX + "step",
        help=RunConfig.model_fields["pauses"].annotation.model_fields["step_mode"].description,  # type: ignore[union-attr]
    )
    _render_models_summary(base)
    limits = base.budget.describe()
    if limits:
        st.sidebar.caption(f"🛑 Spend limits: {escape_markdown(limits)} (Settings page)")

    data = base.model_dump()
    data.update(protocol=protocol, corpus=corpus)
    for role in ROLES:
        data[role]["api_key"] = base.role(role).api_key
    data["retrieval"]["web_search"] = web
    data["pauses"]["step_mode"] = step
    section = RunConfig.model_fields.get(protocol)
    if section is not None and isinstance(section.annotation, type) and issubclass(section.annotation, BaseModel):
        with st.sidebar.expander(f"Settings: {protocol}"):
            data[protocol] = render_section(section.annotation, data[protocol], protocol)
    with st.sidebar.expander("Belief and rulings"):  # every protocol's: the belief per round, the calibrated ruling, grounding
        data["belief"] = render_section(BeliefConfig, data["belief"], "belief")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:  # e.g. a malformed number: say which setting and how to fix it, and start nothing
        problems = describe_problems(exc)
        st.sidebar.error(f"⚠️ {escape_markdown(problems)}")  # the messages quote what was typed
        st.error(f"⚠️ Fix the run settings in the sidebar before verifying: {escape_markdown(problems)}")
        st.stop()
        raise  # st.stop() does not return; this line keeps type checkers sure of it


def _wall_time_here(store: RunStore, protocol: str, base: RunConfig) -> WallTime | None:
    """How long this protocol's claims took on these models here; None when no run says, or the store is away (the page says so).
    Read again only when a run has started, ended or changed state since: the page draws this on every interaction."""
    try:
        return _wall_time_since(store, store.url, protocol, models_of(base.snapshot()), store.activity())
    except Exception as exc:
        if is_store_fault(exc):
            return None
        raise


@st.cache_data(max_entries=64, show_spinner=False)
def _wall_time_since(
    _store: RunStore, url: str, protocol: str, models: tuple[str, ...], activity: tuple[tuple[str, int, float | None, float | None], ...]
) -> WallTime | None:
    """``typical_wall_time`` over the newest runs, kept per store, protocol, models and the store's ``activity``."""
    return typical_wall_time(
        _store.list_runs(limit=WALL_TIME_RUNS, where=RunFilter(own_only=True)), protocol, models
    )  # imported: another desk's


def describe_problems(exc: ValidationError, root: type[BaseModel] = RunConfig) -> str:
    """Each invalid setting by its title and path, what it may be and what was typed (escape it where shown)."""
    return describe_invalid(exc, root)


def models_summary(config: RunConfig) -> str:
    """One line for the sidebar: which backend and model plays each role (roles that agree are named together)."""
    by_model: dict[str, list[str]] = {}
    for role in ROLES:
        spec = config.role(role)
        backend = get_backend(spec.backend)
        name = spec.model or backend.default_model
        shown = f"{BACKEND_ICONS.get(spec.backend, '')} {spec.backend}" + (f" · {name}" if name and name != spec.backend else "")
        by_model.setdefault(shown, []).append(role)
    if len(by_model) == 1:
        return f"{next(iter(by_model))} for every role"
    return "; ".join(f"{', '.join(roles)}: {model}" for model, roles in by_model.items())


def _render_models_summary(config: RunConfig) -> None:
    st.sidebar.caption(f"**Models:** {escape_markdown(models_summary(config))}")  # a model name is typed by the user
    st.sidebar.page_link("pages/settings.py", label="Models, search and pauses", icon="⚙️")
    caveat = model_caveat({(config.role(r).backend, config.role(r).model) for r in ROLES})
    if caveat is not None:  # the same words stand on every verdict card of a run with these models
        kind, text = caveat
        getattr(st.sidebar, kind)(escape_markdown(text))


def render_model_fields(spec: ModelSpec, key_prefix: str) -> dict[str, Any]:
    """Every field of one role's ModelSpec (backend first) as widgets keyed under ``key_prefix``; returns their values."""
    values = spec.model_dump()
    backends = backend_names()
    values["backend"] = st.selectbox(
        "Backend",
        backends,
        index=backends.index(spec.backend) if spec.backend in backends else 0,
        format_func=lambda n: f"{BACKEND_ICONS.get(n, '')} {n}",
        key=f"{key_prefix}.backend",
        help=ModelSpec.model_fields["backend"].description,
    )
    endpoint = {"model", "base_url", "api_key"}
    values = render_section(ModelSpec, values, key_prefix, skip=set(ModelSpec.model_fields) - endpoint, prefixed=False)
    with st.expander("Sampling, limits and cache"):
        return render_section(ModelSpec, values, key_prefix, skip={"backend", *endpoint}, prefixed=False)


def render_section(
    model: type[BaseModel],
    values: dict[str, Any],
    prefix: str,
    skip: set[str] = frozenset(),  # type: ignore[assignment]
    *,
    prefixed: bool = True,
) -> dict[str, Any]:
    """A widget per field of ``model`` (bounds, titles and help from the config model), keyed ``cfg.PREFIX.FIELD``
    (or ``PREFIX.FIELD`` when not ``prefixed``); returns the values, with the skipped fields as they were."""
    out = dict(values)
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        out[name] = _render_field(field, values.get(name), f"{CONFIG_PREFIX if prefixed else ''}{prefix}.{name}")
    return out


def _render_field(field: FieldInfo, value: Any, key: str) -> Any:
    label = field.title or key.rsplit(".", 1)[-1]
    help_text = field.description
    annotation = field.annotation
    bounds = {type(m).__name__: m for m in field.metadata}
    if annotation is bool:
        return st.checkbox(label, value=bool(value), key=key, help=help_text)
    if annotation in (int, float):
        low = getattr(bounds.get("Ge"), "ge", None)
        high = getattr(bounds.get("Le"), "le", None)
        # No min_value/max_value on the widget: the browser would quietly keep the old number when one outside them is typed.
        # The range is in the help, and a number outside it gets a message naming the setting (describe_problems).
        allowed = f" Allowed: {low:g} to {high:g}." if low is not None and high is not None else ""
        if annotation is int:
            return st.number_input(label, value=int(value), step=1, key=key, help=f"{help_text or ''}{allowed}")
        return st.number_input(label, value=float(value), format="%g", key=key, help=f"{help_text or ''}{allowed}")
    if annotation is SecretStr:  # never sent back to the browser: the field starts empty, and empty keeps the key there is
        kept = value if isinstance(value, SecretStr) else SecretStr(str(value or ""))
        shown = masked(kept.get_secret_value())
        typed = st.text_input(
            label, value="", type="password", key=key, help=help_text, placeholder=f"kept: {shown}; type a new one to replace it"
        )
        return SecretStr(typed) if typed else kept
    if typing.get_origin(annotation) is list:  # domain lists, prices: one comma-separated text box
        text = ", ".join(str(v) for v in value or [])
        example = field.examples[0] if field.examples else "nih.gov, .edu"
        return st.text_input(label, value=text, key=key, help=help_text, placeholder=f"e.g. {example}")
    if typing.get_origin(annotation) is typing.Literal:
        options = list(typing.get_args(annotation))
        return st.selectbox(label, options, index=options.index(value) if value in options else 0, key=key, help=help_text)
    return st.text_input(label, value=str(value or ""), key=key, help=help_text)
