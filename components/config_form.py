"""The run settings form, generated from RunConfig: every field's title, description and bounds."""

from __future__ import annotations

import typing
from typing import Any

import streamlit as st
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from components.safe_text import escape_markdown
from components.state import CONFIG_PREFIX
from pipelines.config import ROLES, RunConfig
from pipelines.llm.registry import backend_names, get_backend
from pipelines.protocols.base import get_protocol, protocol_names

BACKEND_ICONS = {"fake": "🧪", "embedded": "💻", "openai": "🌐"}


def render_config_form(corpora: list[str], base: RunConfig | None = None) -> RunConfig:
    """Sidebar widgets for a RunConfig; returns the config they describe."""
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
    corpus = st.sidebar.selectbox(
        "Corpus",
        corpora,
        index=corpora.index(base.corpus) if base.corpus in corpora else 0,
        key=CONFIG_PREFIX + "corpus",
        help=RunConfig.model_fields["corpus"].description,
    )
    backends = backend_names()
    backend = st.sidebar.selectbox(
        "Model backend (all roles)",
        backends,
        index=backends.index(base.debater.backend) if base.debater.backend in backends else 0,
        format_func=lambda n: f"{BACKEND_ICONS.get(n, '')} {n}",
        key=CONFIG_PREFIX + "backend",
        help="Change per role under 'Models per role'.",
    )
    info = get_backend(backend)
    if not info.is_real_model:
        st.sidebar.warning("🧪 **fake** is not a real model: its answers come from word overlap. For demos and tests only.")
    elif backend == "embedded":
        st.sidebar.info(
            "💻 Qwen2.5-Coder-1.5B runs on this machine: private and offline, but a **weak judge**. Treat its verdicts as a first pass."
        )
    web = st.sidebar.toggle(
        "Web search", value=base.retrieval.web_search, key=CONFIG_PREFIX + "web", help=RunConfig.model_fields["retrieval"].description
    )

    step = st.sidebar.toggle(
        "Step mode",
        value=base.checker.step_mode,
        key=CONFIG_PREFIX + "step",
        help=RunConfig.model_fields["checker"].annotation.model_fields["step_mode"].description,  # type: ignore[union-attr]
    )

    data = base.model_dump()
    data.update(protocol=protocol, corpus=corpus)
    for role in ROLES:
        data[role]["backend"] = backend
        data[role]["api_key"] = base.role(role).api_key
    data["retrieval"]["web_search"] = web
    data["checker"]["step_mode"] = step

    with st.sidebar.expander("Models per role"):
        for role in ROLES:
            st.markdown(f"**{RunConfig.model_fields[role].title}**")  # markup: the config model's own field title
            data[role] = _render_model(getattr(base, role), data[role], role)
    for name, field in RunConfig.model_fields.items():
        if name in ("protocol", "corpus", *ROLES):
            continue
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            with st.sidebar.expander(f"Settings: {field.title or name}"):
                shown_above = {"retrieval": {"web_search"}, "checker": {"step_mode"}}.get(name, set())
                data[name] = _render_section(annotation, data[name], name, skip=shown_above)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:  # e.g. a malformed domain: say which setting and how to fix it, and start nothing
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {str(err['msg']).removeprefix('Value error, ')}" for err in exc.errors()
        )
        st.sidebar.error(f"⚠️ {escape_markdown(problems)}")  # the messages quote what was typed
        st.error(f"⚠️ Fix the run settings in the sidebar before verifying: {escape_markdown(problems)}")
        st.stop()
        raise  # st.stop() does not return; this line keeps type checkers sure of it


def _render_model(spec: BaseModel, values: dict[str, Any], role: str) -> dict[str, Any]:
    values = dict(values)
    backends = backend_names()
    values["backend"] = st.selectbox(
        "Backend", backends, index=backends.index(values["backend"]), key=f"{CONFIG_PREFIX}{role}.backend.{values['backend']}"
    )
    rest = _render_section(type(spec), values, role, skip={"backend"})
    rest["backend"] = values["backend"]
    return rest


def _render_section(model: type[BaseModel], values: dict[str, Any], prefix: str, skip: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    out = dict(values)
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        out[name] = _render_field(field, values.get(name), f"{CONFIG_PREFIX}{prefix}.{name}")
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
        if annotation is int:
            return st.number_input(label, value=int(value), min_value=low, max_value=high, step=1, key=key, help=help_text)
        return st.number_input(
            label,
            value=float(value),
            min_value=None if low is None else float(low),
            max_value=None if high is None else float(high),
            key=key,
            help=help_text,
        )
    if annotation is SecretStr:
        raw = value.get_secret_value() if isinstance(value, SecretStr) else str(value or "")
        return SecretStr(st.text_input(label, value=raw, type="password", key=key, help=help_text))
    if typing.get_origin(annotation) is list:  # domain lists: one comma-separated text box
        text = ", ".join(str(v) for v in value or [])
        return st.text_input(label, value=text, key=key, help=help_text, placeholder="e.g. nih.gov, .edu")
    if typing.get_origin(annotation) is typing.Literal:
        options = list(typing.get_args(annotation))
        return st.selectbox(label, options, index=options.index(value) if value in options else 0, key=key, help=help_text)
    return st.text_input(label, value=str(value or ""), key=key, help=help_text)
