"""Model presets: every role moves to the preset's backend and endpoint; a key never follows to another service."""

import pytest
from pydantic import SecretStr

from pipelines.core.config import ROLES, RunConfig
from pipelines.run.llm.presets import LOCAL_SERVER_URL, PRESETS, UnknownPresetError, apply_preset, matching_preset
from pipelines.run.llm.registry import backend_names


def keyed() -> RunConfig:
    config = RunConfig().with_backend("openai", "gpt-4o-mini")
    return config.model_copy(update={r: config.role(r).model_copy(update={"api_key": SecretStr("sk-secret-1")}) for r in ROLES})


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_moves_every_role_and_is_recognised(name: str) -> None:
    config = apply_preset(RunConfig(), name)
    preset = PRESETS[name]
    assert preset.backend in backend_names()
    assert all((config.role(r).backend, config.role(r).base_url) == (preset.backend, preset.base_url) for r in ROLES)
    assert matching_preset(config) == name


def test_other_model_settings_are_kept() -> None:
    config = RunConfig()
    config = config.model_copy(update={"judge": config.judge.model_copy(update={"temperature": 0.7, "max_tokens": 999})})
    judge = apply_preset(config, "local").judge
    assert (judge.temperature, judge.max_tokens, judge.base_url) == (0.7, 999, LOCAL_SERVER_URL)


def test_an_openai_key_never_follows_to_a_local_server() -> None:
    assert all(apply_preset(keyed(), "local").role(r).api_key.get_secret_value() == "" for r in ROLES)
    assert all(apply_preset(keyed(), "openai").role(r).api_key.get_secret_value() == "sk-secret-1" for r in ROLES)


def test_an_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownPresetError, match="choose one of: embedded, fake, local, openai"):
        apply_preset(RunConfig(), "ollama")


def test_mixed_roles_match_no_preset() -> None:
    config = apply_preset(RunConfig(), "fake")
    assert matching_preset(config.model_copy(update={"judge": config.judge.model_copy(update={"backend": "embedded"})})) is None
