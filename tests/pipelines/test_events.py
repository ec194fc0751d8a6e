import pytest

from pipelines.core.domain import Evidence, Verdict
from pipelines.core.events import EVENT_TYPES, EvidenceRetrieved, VerdictReached, dump_event, parse_event


def test_every_event_round_trips_through_json() -> None:
    evidence = Evidence(id="E1", source="corpus", text="t", doc_id="d", sentence_indices=(0, 1), scores={"dense": 0.5})
    for evt in [EvidenceRetrieved(agent="A", round=1, evidence=evidence), VerdictReached(verdict=Verdict(label="SUPPORTS", cited=("E1",)))]:
        assert parse_event(dump_event(evt)) == evt


def test_events_are_immutable_and_registered() -> None:
    evt = VerdictReached(verdict=Verdict(label="REFUTES"))
    with pytest.raises(Exception):  # noqa: B017 (pydantic raises ValidationError on frozen models)
        evt.verdict = Verdict(label="SUPPORTS")  # type: ignore[misc]
    assert {"RunStarted", "ArgumentDelta", "VerdictReached", "RunFailed"} <= set(EVENT_TYPES)


def test_unknown_event_type_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown event type 'Nope'.*VerdictReached"):
        parse_event({"type": "Nope"})
