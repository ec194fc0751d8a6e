"""A card that knows its ground (issue 51): a verdict says whether its reader was measured on this kind of evidence.

desk's probability is a calibration's, measured on Check-COVID's paper abstracts. On another corpus,
or with evidence from the web, the card must say that the probability is unmeasured and show it as a
ranking, never as a frequency.
"""

from __future__ import annotations

import pytest

from pipelines.calibration.files import Calibration, load_shipped
from pipelines.calibration.ground import MEASURED, UNMEASURED, measurement_words, reading_ground
from pipelines.core.domain import Evidence
from pipelines.record.digest import digest
from pipelines.record.verdict_card import verdict_card
from pipelines.run.runner import Services, stream_run
from pipelines.stages import exhibit_reading
from tests.fakes import protocol_config

ABSTRACT = Evidence(id="E1", source="corpus", title="A trial", text="Masks reduced transmission.")
WEB = Evidence(id="E2", source="web", title="A page", text="Masks work.", url="https://example.org/masks")


def calibration(measured_on: list[dict[str, object]]) -> Calibration:
    return Calibration(name="c@1", model="m", bias=0.0, weights={"top": 8.0}, decide_at=0.6, settings={"measured_on": measured_on})


COVID = {
    "corpus": "check-covid",
    "what": "Check-COVID dev (scientific abstracts on COVID-19)",
    "claims": 106,
    "auc": 0.858,
    "accuracy": 0.755,
    "ece": 0.049,
}


def test_the_shipped_default_was_measured_on_check_covid_and_says_how_well() -> None:
    shipped = load_shipped("qwen2.5-coder-1.5b-instruct-q4_k_m", "contrast")
    ground = reading_ground(shipped, "check-covid", [ABSTRACT])
    assert ground.kind == MEASURED
    assert "Check-COVID dev" in ground.words and "AUC 0.858" in ground.words and "accuracy 0.755" in ground.words


def test_another_corpus_is_unmeasured_ground_and_the_card_says_which() -> None:
    ground = reading_ground(calibration([COVID]), "newsroom-archive", [ABSTRACT])
    assert ground.kind == UNMEASURED
    assert "never measured on the corpus this run searched (newsroom-archive)" in ground.words
    assert "Check-COVID dev" in ground.words and "not as a frequency" in ground.words


def test_web_pages_or_pasted_evidence_leave_measured_ground() -> None:
    assert reading_ground(calibration([COVID]), "check-covid", [ABSTRACT, WEB]).kind == UNMEASURED
    pasted = Evidence(id="E3", source="user", title="", text="A note.")
    assert "evidence a checker pasted" in reading_ground(calibration([COVID]), "check-covid", [pasted]).words


def test_no_calibration_or_no_measurement_is_unmeasured() -> None:
    assert reading_ground(None, "check-covid", [ABSTRACT]).kind == UNMEASURED
    assert reading_ground(calibration([]), "check-covid", [ABSTRACT]).kind == UNMEASURED
    assert reading_ground(calibration([{"what": "no corpus named"}]), "check-covid", [ABSTRACT]).kind == UNMEASURED
    assert measurement_words({"corpus": "x", "claims": 20, "auc": 0.5}) == "x, 20 claims: AUC 0.5"


@pytest.mark.parametrize("measured_on, kind", [([{**COVID, "corpus": "demo"}], MEASURED), ([COVID], UNMEASURED)])
def test_the_card_shows_a_lean_and_a_ranking_on_unmeasured_ground(
    services: Services, monkeypatch: pytest.MonkeyPatch, measured_on: list[dict[str, object]], kind: str
) -> None:
    monkeypatch.setattr(exhibit_reading, "load_calibration", lambda *a, **k: calibration(measured_on))
    events = list(
        stream_run("Masks reduce transmission of respiratory viruses", protocol_config("desk", exhibits=4, debate=False), services)
    )
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None
    assert card.model.ground == kind
    if kind == UNMEASURED:
        assert card.model.unmeasured and "a ranking of this claim among others, not a frequency" in card.model.confidence_note
        assert "never measured on the corpus this run searched (demo)" in card.model.ground_note
    else:
        assert not card.model.unmeasured and "measured on this corpus" in card.model.ground_note
        assert "ranking" not in card.model.confidence_note
    assert card.model.reading_note.startswith("Read ")


def test_a_run_of_the_fake_model_has_no_calibration_and_says_its_number_is_unmeasured(services: Services) -> None:
    events = list(stream_run("Masks reduce transmission of respiratory viruses", protocol_config("desk", exhibits=3), services))
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None and card.model.unmeasured
    assert "No calibration was fitted" in card.model.ground_note


@pytest.mark.parametrize("reader, kind", [("contrast", MEASURED), ("verdict", UNMEASURED)])
def test_a_stance_question_never_borrows_another_questions_calibration(
    services: Services, monkeypatch: pytest.MonkeyPatch, reader: str, kind: str
) -> None:
    """Only the contrast question has a calibration measured here: a verdict-question run says it has none, its number a ranking."""
    real = exhibit_reading.load_calibration

    def shelf(model: str, question: str = "separate", data_dir: object = None) -> Calibration | None:
        return calibration([{**COVID, "corpus": "demo"}]) if question == "contrast" else real(model, question, data_dir)  # type: ignore[arg-type]

    monkeypatch.setattr(exhibit_reading, "load_calibration", shelf)
    config = protocol_config("desk", exhibits=3, debate=False, reader=reader, orders=2)
    card = verdict_card(digest(list(stream_run("Masks reduce transmission of respiratory viruses", config, services))))
    assert card is not None and card.model is not None and card.model.ground == kind
    if kind == UNMEASURED:
        assert "No calibration was fitted for this model and question" in card.model.ground_note
        assert "ranking" in card.model.confidence_note
    assert load_shipped("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "verdict") is None, "none ships for the embedded model either"
