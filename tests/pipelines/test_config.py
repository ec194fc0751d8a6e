import json

import pytest
from pydantic import BaseModel, SecretStr

from pipelines.core.config import ROLES, RunConfig


def test_snapshot_never_holds_api_keys() -> None:
    config = RunConfig().with_backend("openai")
    config = config.model_copy(update={"judge": config.judge.model_copy(update={"api_key": SecretStr("sk-secret-123")})})
    assert "sk-secret-123" not in json.dumps(config.snapshot())
    assert all("api_key" not in config.snapshot()[role] for role in ROLES)


def test_env_overrides_nested_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATEDESK_JUDGE__BACKEND", "openai")
    monkeypatch.setenv("DEBATEDESK_RETRIEVAL__TOP_K", "7")
    config = RunConfig()
    assert config.judge.backend == "openai" and config.retrieval.top_k == 7
    assert config.debater.backend == "embedded"


def test_with_backend_sets_every_role() -> None:
    config = RunConfig().with_backend("fake")
    assert {config.role(r).backend for r in ROLES} == {"fake"}


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, object]]:
    found = []
    for name, field in model.model_fields.items():
        found.append((prefix + name, field))
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found.extend(_fields(field.annotation, prefix + name + "."))
    return found


@pytest.mark.parametrize(("path", "field"), _fields(RunConfig))
def test_every_option_has_a_title_and_a_description(path: str, field: object) -> None:
    assert getattr(field, "title", None), f"{path} has no title"
    assert getattr(field, "description", None), f"{path} has no description"
