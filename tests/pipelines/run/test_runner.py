import pytest

from pipelines.core.config import RunConfig
from pipelines.core.errors import InvalidClaimError, UnknownBackendError, UnknownCorpusError, UnknownProtocolError
from pipelines.core.events import RunFailed, VerdictReached
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import start_run, stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config


@pytest.mark.parametrize(
    ("claim", "config", "error", "message"),
    [
        ("", fake_config(), InvalidClaimError, "empty"),
        ("   \n ", fake_config(), InvalidClaimError, "empty"),
        ("x" * 100_000, fake_config(), InvalidClaimError, "100,000 characters; the limit is 2,000"),
        ("ok", fake_config(corpus="nope"), UnknownCorpusError, "unknown corpus 'nope'; choose one of: .*demo"),
        ("ok", fake_config(protocol="nope"), UnknownProtocolError, "choose one of: .*single"),
        ("ok", RunConfig().with_backend("gpt9"), UnknownBackendError, "choose one of: embedded, fake, openai"),
    ],
)
def test_bad_input_is_refused_before_anything_starts(services: Services, claim: str, config: RunConfig, error: type, message: str) -> None:
    before = len(services.store.list_runs()) if services.store else 0
    with pytest.raises(error, match=message):
        list(stream_run(claim, config, services))
    assert (len(services.store.list_runs()) if services.store else 0) == before


def test_a_model_that_dies_mid_run_gives_run_failed_and_keeps_what_was_done(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_after=1)
    events = list(stream_run("Masks reduce transmission of respiratory viruses", fake_config(), services))
    assert isinstance(events[-1], RunFailed) and "simulated crash" in events[-1].reason
    assert services.store is not None
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert services.store.get_run(run_id).status == "failed"  # type: ignore[union-attr]
    assert [type(e) for e in services.store.events(run_id)] == [type(e) for e in events]


def test_unreachable_openai_endpoint_fails_the_run_with_a_clear_message(services: Services) -> None:
    config = fake_config()
    config = config.model_copy(
        update={"debater": config.debater.model_copy(update={"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "timeout_s": 3})}
    )
    events = list(stream_run("Masks reduce transmission of respiratory viruses", config, services))
    assert isinstance(events[-1], RunFailed)
    assert "cannot reach the endpoint" in events[-1].reason


def test_store_keeps_the_run_with_config_and_verdict(services: Services) -> None:
    events = list(stream_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services))
    assert isinstance(events[-1], VerdictReached)
    assert services.store is not None
    run = services.store.get_run(events[0].run_id)  # type: ignore[attr-defined]
    assert run is not None and run.status == "completed" and run.verdict == events[-1].verdict.label
    assert run.config["protocol"] == "single" and run.cost.calls == 4 and run.cost.tokens_in > 0
    assert services.store.events(run.id) == events


def test_a_builtin_corpus_cut_short_on_first_indexing_is_finished_on_next_use(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    from corpora.chunking import chunk_documents
    from corpora.loaders import DemoLoader
    from tests.fakes import make_services

    services = make_services(tmp_path, embedder)
    passages = list(chunk_documents(DemoLoader().load_documents()))
    services.index.ingest("demo", passages[:5])  # the app was stopped while it indexed the demo corpus

    services.ensure_corpus("demo")

    assert services.index.count("demo") == len(passages)
    services.ensure_corpus("demo")  # complete now: nothing more to do
    assert services.index.count("demo") == len(passages)


def test_events_are_stored_off_the_event_loop_in_order_and_complete_when_the_stream_ends(services: Services) -> None:
    events = list(stream_run("Masks reduce transmission of respiratory viruses", fake_config(), services))
    assert services.store is not None
    run = services.store.get_run(events[0].run_id)  # type: ignore[attr-defined]
    assert run is not None and run.status == "completed" and run.event_count == len(events)
    assert services.store.events(run.id) == events


def test_a_store_that_cannot_take_an_event_fails_the_run(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    assert services.store is not None

    def broken(run_id: str, events: object, owner: str | None = None, journal: object = ()) -> int:
        raise OSError("disk full")

    monkeypatch.setattr(services.store, "append_many", broken)
    handle = start_run("Masks reduce transmission of respiratory viruses", fake_config(), services)
    with pytest.raises(OSError, match="disk full"):
        list(handle.stream())
    assert handle.status == "failed"
    assert services.store.get_run(handle.run_id).status == "failed"  # type: ignore[union-attr]


def test_a_built_model_whose_server_went_away_is_built_again(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server that died or was replaced since the model was built: the next run builds (and so restarts) it."""
    from pipelines.core.config import ModelSpec
    from pipelines.run.llm import registry

    registry.get_backend("fake")  # the built-in backends first, so the one added below does not hide them
    alive = {"now": True}
    built: list[FakeChatModel] = []

    def build(spec: ModelSpec, settings: object) -> FakeChatModel:
        built.append(FakeChatModel())
        return built[-1]

    backend = registry.Backend(name="local-server", build=build, description="test", still_serves=lambda chat, settings: alive["now"])
    monkeypatch.setitem(registry.BACKENDS, "local-server", backend)
    spec = ModelSpec(backend="local-server")

    first = services.chat_model(spec)
    assert services.chat_model(spec) is first and services.built_chat_model(spec) is first, "a live one is reused"
    alive["now"] = False
    assert services.built_chat_model(spec) is None, "a dead one is not handed out"
    alive["now"] = True
    second = services.chat_model(spec)
    assert second is not first and len(built) == 2
