from pipelines.core.events import (
    ArgumentDelta,
    EvidenceRetrieved,
    ModelCallCompleted,
    QueryIssued,
    RunStarted,
    StageCompleted,
    StageStarted,
    TurnCompleted,
    VerdictReached,
    WebSearchUnavailable,
)
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import CannedWeb, fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_single_event_sequence_ends_in_a_cited_verdict(services: Services) -> None:
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    kinds = [type(e) for e in events]
    assert kinds[0] is RunStarted and kinds[-1] is VerdictReached
    assert kinds.index(QueryIssued) < kinds.index(EvidenceRetrieved) < kinds.index(ArgumentDelta) < kinds.index(TurnCompleted)
    assert [e.stage for e in events if isinstance(e, StageStarted)] == ["queries", "retrieval", "answer", "belief"]
    assert any(isinstance(e, StageCompleted) and e.stage == "answer" for e in events)
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.label == "SUPPORTS" and verdict.cited
    retrieved = {e.evidence.id for e in events if isinstance(e, EvidenceRetrieved)}
    assert set(verdict.cited) <= retrieved
    assert sum(isinstance(e, ModelCallCompleted) for e in events) == 4  # queries, the answer, the belief in its 2 option orders


def test_dead_web_is_reported_and_the_run_goes_on(services: Services) -> None:
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    assert any(isinstance(e, WebSearchUnavailable) for e in events)
    assert isinstance(events[-1], VerdictReached)


def test_web_results_join_the_evidence_with_links(services: Services) -> None:
    services.web = CannedWeb()
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    web = [e.evidence for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.source == "web"]
    assert web and web[0].url == "https://example.org/masks"


def test_unrelated_claim_gets_not_enough_info(services: Services) -> None:
    events = list(stream_run("Quantum chromodynamics explains stock prices", fake_config(protocol="single"), services))
    assert events[-1].verdict.label == "NOT ENOUGH INFO"  # type: ignore[attr-defined]


def test_parse_label_reads_the_forms_small_models_write() -> None:
    from pipelines.stages.argument import parse_label

    assert parse_label("Reasoning.\nLabel: REFUTES") == "REFUTES"
    assert parse_label("Reasoning.\n**Final label:** NOT ENOUGH INFO") == "NOT ENOUGH INFO"
    assert parse_label('Masks filter particles [E1]. The label line for this claim is "SUPPORTS".') == "SUPPORTS"
    assert parse_label("The evidence refutes nothing and supports nothing.") is None
    assert parse_label("Reasoning.\nSUPPORTS") == "SUPPORTS"
    # Qwen 1.5B as the toolmad judge, asked for reasons first: the label in the last sentence about a label.
    ruling = (
        "The evidence in [E1] does not settle the claim. The search debater's answer, which cites [E1], also does not "
        "provide enough information to support or refute this claim. Therefore, the label for this round is NOT ENOUGH INFO."
    )
    assert parse_label(ruling) == "NOT ENOUGH INFO"
    assert parse_label("The study supports an older result but refutes the claim's dates.") is None, "no label sentence: ambiguous"
    assert parse_label("It supports one reading. The verdict is unclear to me; it refutes and supports.") is None


def test_named_labels_lists_every_label_an_answer_gives_on_a_decision_line() -> None:
    from pipelines.stages.argument import named_labels

    assert named_labels("Ruling: REFUTES\n\nLabel: NOT ENOUGH INFO") == ["REFUTES", "NOT ENOUGH INFO"]
    assert named_labels("Ruling: REFUTES\n\nLabel: REFUTES") == ["REFUTES"], "the same label twice is no conflict"
    assert named_labels("**Verdict:** supported\nThe evidence is thin.\nLabel: SUPPORTS") == ["SUPPORTS"]
    assert named_labels("The study refutes an older claim, then supports a newer one.") == [], "prose is not a decision line"
