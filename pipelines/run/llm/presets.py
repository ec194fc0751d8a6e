"""Model presets: where the models are served (embedded, OpenAI, a local OpenAI-compatible server), applied to every role."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr

from pipelines.core.config import ROLES, RunConfig
from pipelines.core.errors import UnknownNameError

LOCAL_SERVER_URL = "http://localhost:11434/v1"


@dataclass(frozen=True)
class Preset:
    """Backend, model and endpoint for every role, with a line saying what it is for."""

    name: str
    title: str
    description: str
    backend: str
    model: str = ""
    base_url: str = ""
    keeps_api_key: bool = False  # only a preset that talks to the key's own service keeps a key typed earlier


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "embedded",
            "Embedded model (this machine)",
            "Qwen2.5-Coder-1.5B through llama.cpp on this machine: private and offline, but a weak judge. Prepared by `make run` (1.1 GB).",
            backend="embedded",
        ),
        Preset(
            "openai",
            "OpenAI",
            "OpenAI's API with gpt-4o-mini: enter an API key below (or set OPENAI_API_KEY). Claims and evidence are sent to OpenAI.",
            backend="openai",
            model="gpt-4o-mini",
            keeps_api_key=True,
        ),
        Preset(
            "local",
            "Local OpenAI-compatible server",
            f"A server on this machine that speaks the OpenAI API: Ollama ({LOCAL_SERVER_URL}), vLLM or llama.cpp's server "
            "(http://localhost:8000/v1). Name the model it serves; Test connection lists them.",
            backend="openai",
            base_url=LOCAL_SERVER_URL,
        ),
        Preset(
            "fake",
            "Fake (demo, no model)",
            "Instant answers from word overlap: for demos and tests, never for a real verdict.",
            backend="fake",
        ),
    )
}


class UnknownPresetError(UnknownNameError):
    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__("preset", name, valid)


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownPresetError(name, list(PRESETS)) from None


def apply_preset(config: RunConfig, name: str) -> RunConfig:
    """``config`` with every role on the preset's backend, model and endpoint (other model settings kept).

    An API key is dropped unless the preset goes to the service it was typed for: a key for
    OpenAI must never be sent to a local server or anyone else."""
    preset = get_preset(name)
    roles: dict[str, object] = {}
    for role in ROLES:
        spec = config.role(role)
        update: dict[str, object] = {"backend": preset.backend, "model": preset.model, "base_url": preset.base_url}
        if not preset.keeps_api_key:
            update["api_key"] = SecretStr("")
        roles[role] = spec.model_copy(update=update)
    return config.model_copy(update=roles)


def matching_preset(config: RunConfig) -> str | None:
    """The preset every role is on now, if one is (a role's own model name does not count against it)."""
    for preset in PRESETS.values():
        if all(config.role(r).backend == preset.backend and config.role(r).base_url == preset.base_url for r in ROLES):
            return preset.name
    return None
