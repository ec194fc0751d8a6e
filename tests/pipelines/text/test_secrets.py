"""API keys never reach the run store (runs, events, journal), the exports or the logs, whatever echoes them."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from sqlalchemy import text

from pipelines.core.config import ROLES, RunConfig
from pipelines.core.domain import Verdict
from pipelines.core.events import RunFailed, VerdictReached
from pipelines.protocols.base import PROTOCOLS, Protocol, register_protocol
from pipelines.record.export import EXPORT_FORMATS, export_run
from pipelines.run.context import RunContext
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"
ROLE_KEY = "sk-role-SECRET-0123456789abcdef"
ENV_KEY = "sk-env-SECRET-fedcba9876543210"


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> RunConfig:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    config = fake_config(protocol="single")
    return config.model_copy(update={role: config.role(role).model_copy(update={"api_key": SecretStr(ROLE_KEY)}) for role in ROLES})


def everything_stored(services: Services) -> str:
    assert services.store is not None
    with services.store.engine.connect() as conn:
        return "\n".join(str(row) for table in ("runs", "events", "journal") for row in conn.execute(text(f"SELECT * FROM {table}")))


def assert_no_secret(where: str, content: str) -> None:
    for secret in (ROLE_KEY, ENV_KEY, ROLE_KEY[8:], ENV_KEY[8:]):
        assert secret not in content, f"a key leaked into {where}"


def test_keys_echoed_by_a_model_are_kept_out_of_store_exports_and_logs(
    services: Services, keyed: RunConfig, caplog: pytest.LogCaptureFixture
) -> None:
    services.chat_override = FakeChatModel(
        script=[json.dumps({"queries": [f"masks {ROLE_KEY}"]}), f"My key is {ENV_KEY}, and masks work [E1].\nLabel: SUPPORTS"]
    )
    with caplog.at_level(logging.DEBUG):
        events = list(stream_run(CLAIM, keyed, services))
    assert isinstance(events[-1], VerdictReached)
    assert "[redacted]" in json.dumps([e.model_dump(mode="json") for e in events])
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert_no_secret("the run store", everything_stored(services))
    assert_no_secret("the events", json.dumps([e.model_dump(mode="json") for e in events]))
    summary = services.store.get_run(run_id)  # type: ignore[union-attr]
    assert summary is not None and "api_key" not in json.dumps(summary.config)
    for fmt in EXPORT_FORMATS:
        assert_no_secret(f"the {fmt} export", export_run(summary, services.store.events(run_id), fmt))  # type: ignore[union-attr]
    assert_no_secret("the logs", caplog.text)


@pytest.fixture
def leaky_protocol() -> Iterator[str]:
    async def leak(ctx: RunContext) -> Verdict:
        raise RuntimeError(f"bug while calling with key {ROLE_KEY}")

    register_protocol(Protocol(name="leaky-test", run=leak, title="leaky", description="raises a bug that quotes the key"))
    yield "leaky-test"
    PROTOCOLS.pop("leaky-test", None)


def test_a_crash_that_quotes_a_key_is_recorded_and_logged_without_it(
    services: Services, keyed: RunConfig, leaky_protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    events = []
    with caplog.at_level(logging.DEBUG), pytest.raises(RuntimeError):
        for evt in stream_run(CLAIM, keyed.model_copy(update={"protocol": leaky_protocol}), services):
            events.append(evt)
    assert isinstance(events[-1], RunFailed) and "[redacted]" in events[-1].reason
    assert "run" in caplog.text and "crashed" in caplog.text
    assert_no_secret("the logs", caplog.text)
    assert_no_secret("the run store", everything_stored(services))
