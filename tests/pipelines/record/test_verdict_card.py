"""The verdict card read off a run's digest: one vocabulary, confidence or why not, quoted exhibits, safe links, the override and its trail."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpora.base import split_sentences
from pipelines.core.domain import Evidence, Verdict
from pipelines.core.events import EvidenceRetrieved, QueryIssued, RunStarted, VerdictOverridden, VerdictReached, WebSearchUnavailable
from pipelines.protocols.base import PROTOCOLS, get_protocol
from pipelines.record.digest import Cost, digest
from pipelines.record.verdict_card import COMMON_LABELS, closest_sentences, common_label, model_caveat, verdict_card
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from pipelines.stages.exhibit_reading import CALIBRATED
from tests.fakes import CannedWeb, fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
STATES_CONFIDENCE = {"desk", "proclaim", "radar"}


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_every_protocol_gets_a_card_in_one_vocabulary(services: Services, protocol: str) -> None:
    run = digest(stream_run(CLAIM, fake_config(protocol=protocol), services))
    card = verdict_card(run)
    assert card is not None and card.model is not None and card.checker is None
    model = card.model
    assert model.label.common in COMMON_LABELS and model.label.own == run.verdict.label  # type: ignore[union-attr]
    if protocol in STATES_CONFIDENCE:
        assert model.confidence is not None
        # The fake has no calibration: where the number is the reading's, the card calls it a ranking (pipelines/calibration/ground.py).
        assert model.confidence_note.startswith("a ranking of this claim" if model.unmeasured else "from ")
    else:
        assert model.confidence is None and model.confidence_note.endswith("."), "one line why there is none"
    assert model.reason, "a plain reason"
    assert model.detail[0].startswith(f"Decided by {run.verdict.decided_by}.")  # type: ignore[union-attr]
    assert card.caveat is not None and "not a real model" in card.caveat[1]
    if run.evidence:
        assert 1 <= len(model.exhibits) <= 3
        for exhibit in model.exhibits:
            sentences = split_sentences(run.evidence[exhibit.id].text)
            assert exhibit.quotes and all(q in sentences for q in exhibit.quotes), "quotes are the passage's own sentences"
    else:
        assert model.exhibits == () and "No evidence was retrieved" in model.exhibits_note


def test_the_labels_map_to_three_words_and_an_unknown_one_stays() -> None:
    assert [common_label(x) for x in ("SUPPORTS", "TRUE", "supported", "REFUTES", "NOT SUPPORTED", "FALSE")] == ["SUPPORTED"] * 3 + [
        "REFUTED"
    ] * 3
    assert [common_label(x) for x in ("NOT ENOUGH INFO", "INCONCLUSIVE", "HALF-TRUE")] == ["NOT ENOUGH INFO"] * 3
    assert common_label("MISLEADING") == "MISLEADING"  # PolitiFact's PANTS ON FIRE is REFUTED (tests/pipelines/record/test_labels.py)


def _run(*extra: object, url: str | None = None, cited: tuple[str, ...] = ("E1",), model: str = "") -> list[object]:
    item = Evidence(id="E1", source="web", text="Cats sleep a lot. Masks cut the spread of flu in homes. Dogs bark.", title="Flu", url=url)
    judge = {"backend": "embedded", "model": model}
    return [
        RunStarted(run_id="r", claim="Masks cut flu spread", protocol="single", config={"judge": judge}, at=1.0),
        EvidenceRetrieved(agent="A", round=1, evidence=item, at=2.0),
        VerdictReached(verdict=Verdict(label="SUPPORTS", cited=cited, decided_by="agent", stop_reason="single agent answer"), at=3.0),
        *extra,
    ]


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://example.org/flu", True),
        ("javascript:alert(1)", False),
        ("http://127.0.0.1/admin", False),
        ("data:text/html,<b>x</b>", False),
        (None, False),
    ],
)
def test_an_exhibit_links_only_to_a_public_http_page(url: str | None, linked: bool) -> None:
    card = verdict_card(digest(_run(url=url)))  # type: ignore[arg-type]
    assert card is not None and card.model is not None
    assert card.model.exhibits[0].url == (url if linked else None)


def test_the_quoted_sentences_are_those_closest_to_the_claim() -> None:
    card = verdict_card(digest(_run()))  # type: ignore[arg-type]
    assert card is not None and card.model is not None
    assert card.model.exhibits[0].quotes == ("Masks cut the spread of flu in homes.",), "a sentence sharing no word is not quoted"
    assert closest_sentences("One. Two.", {"three"}) == ("One.",), "none shares a word: the passage's first sentence"


def test_the_embedded_model_gets_its_weak_judge_caveat_on_the_card() -> None:
    card = verdict_card(digest(_run()))  # type: ignore[arg-type]
    assert card is not None and card.caveat is not None and "weak judge" in card.caveat[1]
    assert model_caveat({("openai", "")}) is None and model_caveat({("no-such-backend", "")}) is None


def test_the_caveat_names_the_embedded_model_the_run_used() -> None:
    """A run on another local GGUF is not called Qwen, nor a weak judge: nobody measured it."""
    card = verdict_card(digest(_run(model="/models/Llama-3.1-8B-Instruct-Q4_K_M.gguf")))  # type: ignore[arg-type]
    assert card is not None and card.caveat is not None
    text = card.caveat[1]
    assert "Llama-3.1-8B-Instruct-Q4_K_M runs on this machine" in text
    assert "Qwen" not in text and "weak judge" not in text


def test_a_verdict_naming_no_exhibit_says_so_and_shows_what_the_debate_cited() -> None:
    card = verdict_card(digest(_run(cited=())))  # type: ignore[arg-type]
    assert card is not None and card.model is not None
    assert card.model.exhibits == () and card.model.exhibits_note == "The verdict names no exhibit, and no argument cited one."


def test_an_override_leads_the_card_with_the_model_beneath_and_its_trail() -> None:
    model = Verdict(label="SUPPORTS", cited=("E1",))
    override = VerdictOverridden(model_verdict=model, label="REFUTES", note="retracted", by="Ana", at=50.0)
    run = digest(_run(override))  # type: ignore[arg-type]
    card = verdict_card(run)
    assert card is not None and card.label is not None and card.label.common == "REFUTED" and card.label.own == "REFUTES"
    assert card.model is not None and card.model.label.common == "SUPPORTED", "the model's verdict stays beneath"
    assert [(a.at, a.by) for a in card.audit] == [(50.0, "Ana")] and "set the verdict to REFUTED (its word: REFUTES)" in card.audit[0].what
    assert "retracted" in card.audit[0].what and "**" not in card.audit[0].what
    assert run.cost.wall_seconds == 2.0, "the override, set later, is not the run's time"


def test_cost_says_when_calls_came_from_the_cache() -> None:
    assert "cache" not in Cost(calls=3).describe()
    assert (
        Cost(calls=3, cached_calls=3)
        .describe()
        .endswith("(all 3 calls answered from the cache or a resumed run's record: no tokens, no model time)")
    )
    assert "1 of 3 calls answered from the cache" in Cost(calls=3, cached_calls=1).describe()


def test_every_protocol_says_on_its_registration_how_it_decides_and_where_its_confidence_comes_from() -> None:
    """The card's per-protocol words live on each protocol's registration, not in a table the card keeps."""
    from pipelines.protocols.base import get_protocol, protocol_names

    for name in protocol_names():
        card = get_protocol(name).card
        assert card.how_decided, f"{name} does not say how it decides"
        assert card.confidence_source and card.no_confidence


@pytest.mark.parametrize("protocol, decided_by", [("desk", "calibrated exhibit stances"), ("radar", CALIBRATED)])
def test_a_not_enough_info_reading_says_what_its_number_is_not_the_probability_of_the_label(protocol: str, decided_by: str) -> None:
    # Seen on a replay: "Confidence 0.35 from the probability of the label" on a NOT ENOUGH INFO verdict whose reading was
    # supported 65% against refuted 35% of what addresses the claim, beside a belief of 22% for NOT ENOUGH INFO.
    def card_of(label: str, confidence: float) -> str:
        events = [
            RunStarted(run_id="r", claim="c", protocol=protocol, config={"judge": {"backend": "embedded"}}, at=1.0),
            VerdictReached(verdict=Verdict(label=label, confidence=confidence, decided_by=decided_by), at=2.0),
        ]
        card = verdict_card(digest(events))
        assert card is not None and card.model is not None
        return card.model.confidence_note

    reading = get_protocol("desk").card
    unsettled, sided = card_of("NOT ENOUGH INFO", 0.35), card_of("SUPPORTS", 0.8)
    assert reading.unsettled_confidence_source in unsettled and "the weaker side's share" in unsettled
    assert "probability of the label" not in unsettled
    assert reading.confidence_source in sided and "weaker side" not in sided


def test_toolmad_s_card_says_when_its_search_debater_could_not_reach_the_web(
    services: Services, demo_data_dir: Path, embedder: Embedder
) -> None:
    """Offline, Tool-MAD's Search debater reads the corpus too: the card said two debaters "one searching the corpus and one
    the web" agreed, when both had argued from the same corpus."""
    config = with_settings(fake_config(protocol="toolmad"), "retrieval", web_search=True)
    offline = verdict_card(digest(stream_run(CLAIM, config, services)))  # the services' web is dead
    assert offline is not None and offline.model is not None
    assert "But the web could not be searched in this run: the Search debater read the local corpus too" in offline.model.reason
    online = verdict_card(digest(stream_run(CLAIM, config, make_services(demo_data_dir, embedder, web=CannedWeb()))))
    assert online is not None and online.model is not None and online.model.reason
    assert "could not be searched" not in online.model.reason


def test_a_web_that_failed_for_some_queries_is_counted_on_the_card() -> None:
    page = Evidence(id="E1", source="web", text="Masks cut the spread of flu in homes.", title="Flu", url="https://example.org/flu")
    events = [
        RunStarted(run_id="r", claim="Masks cut flu spread", protocol="toolmad", config={}, at=1.0),
        QueryIssued(agent="Search", round=1, query="masks flu", tool="web", at=2.0),
        EvidenceRetrieved(agent="Search", round=1, evidence=page, at=2.1),
        QueryIssued(agent="Search", round=2, query="masks flu homes", tool="web", at=3.0),
        WebSearchUnavailable(reason="rate limited", fallback="corpus search", agent="Search", round=2, at=3.1),
        VerdictReached(verdict=Verdict(label="SUPPORTS", rationale="E1 says so.", decided_by="consensus"), at=4.0),
    ]
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None
    assert "But the web could not be searched for 1 of the Search debater's 2 queries" in card.model.reason
    single = verdict_card(digest([RunStarted(run_id="r", claim="c", protocol="single", config={}, at=1.0), *events[1:]]))
    assert single is not None and single.model is not None and "could not be searched" not in single.model.reason
