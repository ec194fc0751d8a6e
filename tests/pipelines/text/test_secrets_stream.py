"""Secrets split across streamed chunks, and credentials inside a base URL, never reach the store, the events or the exports."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from pipelines.core.config import ROLES, ModelSpec, RunConfig
from pipelines.core.events import ArgumentDelta, RunFailed, TurnCompleted, VerdictReached
from pipelines.core.text.urls import scrub_url, url_secrets
from pipelines.record.export import EXPORT_FORMATS, export_run
from pipelines.record.record_file import RecordError, load_record
from pipelines.record.redaction import Redactor, StreamRedactor
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import Services, resume_run, stream_run
from tests.fakes import fake_config, hand_record
from tests.pipelines.text.test_secrets import everything_stored

CLAIM = "Masks reduce transmission of respiratory viruses"
KEY = "sk-live-SPLITME-0123456789abcdef"
URL_PASSWORD = "hunter2-url-password"
URL_TOKEN = "AZURE-QUERY-KEY-98765"
CRED_URL = f"https://desk:{URL_PASSWORD}@llm.example.org/v1?api-key={URL_TOKEN}&deployment=gpt"


class TinyChunks(FakeChatModel):
    """Streams its answers five characters at a time, as a real tokenizer cuts words: a key arrives in pieces."""

    def _chunks(self, text: str) -> Iterator[str]:
        for i in range(0, len(text), 5):
            yield text[i : i + 5]


def keyed(config: RunConfig, key: str = KEY, base_url: str = "") -> RunConfig:
    update: dict[str, object] = {"api_key": SecretStr(key)}
    if base_url:
        update["base_url"] = base_url
    return config.model_copy(update={role: config.role(role).model_copy(update=update) for role in ROLES})


def test_a_key_split_across_streamed_chunks_is_redacted_in_events_store_and_exports(services: Services) -> None:
    services.chat_override = TinyChunks(
        script=[json.dumps({"queries": ["masks"]}), f"My key is {KEY} and masks work [E1].\nLabel: SUPPORTS"]
    )
    events = list(stream_run(CLAIM, keyed(fake_config(protocol="single")), services))
    assert isinstance(events[-1], VerdictReached)
    streamed = "".join(e.text for e in events if isinstance(e, ArgumentDelta))
    assert KEY not in streamed and "[redacted]" in streamed, "the chunks, put back together, hold no key"
    assert streamed == next(e for e in events if isinstance(e, TurnCompleted)).turn.text, "and nothing else is lost"
    assert max(len(e.text) for e in events if isinstance(e, ArgumentDelta)) < 40, "the text still streams in pieces"
    stored = everything_stored(services)
    assert KEY not in stored
    run_id = events[0].run_id  # type: ignore[attr-defined]
    summary = services.store.get_run(run_id)  # type: ignore[union-attr]
    for fmt in EXPORT_FORMATS:
        text = export_run(summary, services.store.events(run_id), fmt)  # type: ignore[arg-type,union-attr]
        assert KEY not in text.replace("\\", ""), fmt


def test_the_stream_redactor_catches_every_split_of_a_key() -> None:
    redactor = Redactor([KEY, "short-key"])
    for size in range(1, len(KEY) + 3):
        stream = StreamRedactor(redactor.secrets, redactor.text, redactor.event)
        text = f"before {KEY} middle short-key after"
        out = []
        for i in range(0, len(text), size):
            out += stream.feed(ArgumentDelta(turn_id="A-r1", agent="A", round=1, text=text[i : i + size]))
        out += stream.flush()
        joined = "".join(e.text for e in out)  # type: ignore[attr-defined]
        assert joined == "before [redacted] middle [redacted] after", size


def test_base_url_credentials_are_never_stored_shown_or_exported(services: Services) -> None:
    services.chat_override = FakeChatModel(script=[json.dumps({"queries": [f"see {CRED_URL}"]}), f"Endpoint {CRED_URL} says masks work"])
    config = keyed(fake_config(protocol="single"), base_url=CRED_URL)
    events = list(stream_run(CLAIM, config, services))
    assert isinstance(events[-1], VerdictReached)
    stored = everything_stored(services)
    everything = stored + json.dumps([e.model_dump(mode="json") for e in events])
    run_id = events[0].run_id  # type: ignore[attr-defined]
    summary = services.store.get_run(run_id)  # type: ignore[union-attr]
    assert summary is not None and summary.config["debater"]["base_url"] == "https://llm.example.org/v1?api-key=redacted&deployment=gpt"
    for fmt in EXPORT_FORMATS:
        everything += export_run(summary, services.store.events(run_id), fmt)  # type: ignore[union-attr]
    assert URL_PASSWORD not in everything and URL_TOKEN not in everything


def test_a_resume_gets_the_base_url_credentials_back_from_the_checker(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_after=1)
    config = keyed(fake_config(protocol="single"), base_url=CRED_URL)
    events = list(stream_run(CLAIM, config, services))
    assert isinstance(events[-1], RunFailed)
    services.chat_override = FakeChatModel()
    handle = resume_run(events[0].run_id, services, secrets_from=config)  # type: ignore[attr-defined]
    list(handle.stream())
    assert handle.config.debater.base_url == CRED_URL and handle.config.debater.api_key.get_secret_value() == KEY
    other = keyed(fake_config(protocol="single"), base_url="https://elsewhere.example/v1?key=zzzzzzzz")
    services.chat_override = FakeChatModel(fail_after=1)
    failed = list(stream_run(CLAIM, config, services))
    handle = resume_run(failed[0].run_id, services, secrets_from=other)  # type: ignore[attr-defined]
    list(handle.stream())
    assert handle.config.debater.base_url == scrub_url(CRED_URL), "a different endpoint's URL is not swapped in"


@pytest.mark.parametrize(
    ("url", "scrubbed"),
    [
        ("https://u:p4ssword@h.example/v1", "https://h.example/v1"),
        ("http://localhost:11434/v1", "http://localhost:11434/v1"),
        ("https://h.example/v1?key=abcd1234&x=1", "https://h.example/v1?key=redacted&x=1"),
        ("https://h.example/v1?token=t0k3n99&access_token=zzzz9999", "https://h.example/v1?token=redacted&access_token=redacted"),
        ("https://[::1]:8080/v1?Api-Key=abcd1234", "https://[::1]:8080/v1?Api-Key=redacted"),
    ],
)
def test_scrub_url_removes_user_info_and_credential_parameters(url: str, scrubbed: str) -> None:
    assert scrub_url(url) == scrubbed
    for secret in url_secrets(url):
        assert secret not in scrub_url(url)


def test_an_imported_record_with_credentials_in_a_base_url_is_refused() -> None:
    record = hand_record("c1 claim", config={"debater": ModelSpec(base_url=CRED_URL).model_dump(mode="json", exclude={"api_key"})})
    with pytest.raises(RecordError, match="run.config.debater.base_url: records never hold credentials"):
        load_record(json.dumps(record))
