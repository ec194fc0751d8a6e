"""The card's words when nothing the search found is near the claim, from the shipped table of train claims' likenesses."""

from pipelines.calibration.likeness import MOST, deciding_likeness, far_note
from pipelines.core.events import VerdictAggregated
from pipelines.record.digest import digest


def test_the_shipped_table_holds_two_beats_of_train_claims() -> None:
    beats = deciding_likeness()
    assert len(beats) == 2 and all(len(v) == 400 and list(v) == sorted(v) for v in beats.values())


def test_the_note_speaks_only_when_most_deciding_passages_of_every_beat_were_nearer() -> None:
    beats = deciding_likeness()
    edge = min(values[int(len(values) * (1 - MOST))] for values in beats.values())  # below it every beat has MOST nearer
    assert far_note(edge - 0.02).startswith(f"Nothing the search found is near the claim: the nearest passage is {edge - 0.02:.2f}")
    assert far_note(0.7) == "" and far_note(None) == ""
    assert "of 400 political claims (LIAR-PLUS train)" in far_note(0.2)


def test_a_weighing_after_a_debate_keeps_what_the_search_found() -> None:
    first = VerdictAggregated(
        probabilities={}, label="SUPPORTS", confidence=0.8, raw=0.6, calibrated=0.8, read=14, set_aside=11, nearest=0.34
    )
    again = first.model_copy(update={"set_aside": 0, "nearest": None, "debated": True})
    aggregated = digest([first, again]).aggregated
    assert aggregated is not None and aggregated.debated and (aggregated.set_aside, aggregated.nearest) == (11, 0.34)
