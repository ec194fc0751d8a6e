"""Export and import: the JSON record round-trips, ClaimReview has the required fields, a bad file is refused with every reason."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipelines.core.events import ModelCallCompleted, RecordImported, RunStarted, VerdictReached
from pipelines.record.claimreview import RATINGS, claimreview_problems
from pipelines.record.export import claimreview_refusal, export_filename, export_run, to_claimreview, to_markdown
from pipelines.record.importer import import_run
from pipelines.record.record_file import RecordError, load_record, record_schema, to_json
from pipelines.record.store import RunFilter, RunStore
from pipelines.record.verdict_card import COMMON_LABELS, common_label
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.step_gate import override_verdict
from tests.fakes import CannedWeb, fake_config, hand_record, with_settings
from tests.stores import store_url  # noqa: F401  (the fixture)

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def finished(services: Services) -> tuple[RunStore, str]:
    """A completed run with web results (one a hostile page) and a checker's override."""
    services.chat_override = FakeChatModel()
    services.web = CannedWeb()  # type: ignore[assignment]
    config = fake_config(protocol="single")
    config = with_settings(config, "retrieval", web_search=True)
    events = list(stream_run(CLAIM, config, services))
    assert isinstance(events[-1], VerdictReached)
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert services.store is not None
    override_verdict(services.store, run_id, "NOT ENOUGH INFO", "Only one trial; wait for the review.", "Ana")
    return services.store, run_id


def test_export_then_import_gives_the_same_record(finished: tuple[RunStore, str], store_url: str) -> None:  # noqa: F811
    store, run_id = finished
    exported = to_json(store.get_run(run_id), store.events(run_id))  # type: ignore[arg-type]
    other = RunStore(store_url)  # another desk (SQLite, and PostgreSQL when there is one)
    done = import_run(other, exported, source="test.json", by="Ben")
    summary = done.summary
    assert done.new and summary.id == run_id and summary.origin == "imported from test.json"
    marker, *stored = other.events(run_id)
    assert stored == store.events(run_id), "the file's events are kept as they are"
    assert isinstance(marker, RecordImported) and (marker.source, marker.by, marker.events) == ("test.json", "Ben", len(stored))
    assert summary.checker_verdict is None and summary.final_verdict == summary.verdict, "the file's override is not this desk's"
    assert other.stored_chain(run_id).intact
    assert import_run(other, exported, source="test.json", by="Ben").new is False, "the same record imported twice is stored once"


def test_a_different_run_under_a_taken_id_gets_a_new_id(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    record = json.loads(to_json(store.get_run(run_id), store.events(run_id)))  # type: ignore[arg-type]
    record["events"] = record["events"][:3]
    record["run"]["totals"] = None
    record["run"]["status"], record["run"]["verdict"], record["run"]["checker_verdict"] = "failed", None, None
    record["run"]["checker_at"] = None  # it goes with the checker's verdict
    record["run"]["final_verdict"] = None
    done = import_run(store, json.dumps(record), source="taken.json", by="Ben")
    summary, new = done.summary, done.new
    assert new and summary.id == f"{run_id}-imported-2" and summary.status == "failed"
    first = store.events(summary.id)[1]
    assert isinstance(first, RunStarted) and first.run_id == summary.id


def test_claimreview_has_the_required_fields(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    doc = to_claimreview(store.get_run(run_id), store.events(run_id), public_url="https://desk.example.org/runs/")  # type: ignore[arg-type]
    assert claimreview_problems(doc) == []
    assert doc["@context"] == "https://schema.org" and doc["@type"] == "ClaimReview"
    assert doc["claimReviewed"] == CLAIM and doc["itemReviewed"]["@type"] == "Claim"
    assert doc["url"] == f"https://desk.example.org/runs/{run_id}"
    assert doc["reviewRating"]["ratingValue"] == 3 and doc["reviewRating"]["name"] == "NOT ENOUGH INFO", "the checker's verdict rules"
    assert doc["reviewRating"]["alternateName"] == "Unproven"
    assert doc["reviewRating"]["ratingExplanation"] == "Only one trial; wait for the review."
    assert doc["editor"] == {"@type": "Person", "name": "Ana"} and doc["author"] == [{"@type": "Organization", "name": "DebateDesk"}]
    assert [c["url"] for c in doc["citation"]] and all(c["url"].startswith("https://") for c in doc["citation"]), "no javascript: links"
    assert len(doc["datePublished"]) == 10


def test_history_offers_a_claimreview_only_for_a_run_this_desk_reviewed(finished: tuple[RunStore, str], store_url: str) -> None:  # noqa: F811
    """Issue 46: History's ClaimReview download rated any run (unreviewed, imported) as a fact-check."""
    store, run_id = finished
    reviewed = store.get_run(run_id)
    assert reviewed is not None and claimreview_refusal(reviewed) is None  # an editor of this desk set its verdict
    unreviewed = replace(reviewed, checker_verdict=None, checker_by=None)
    assert "nobody on this desk has reviewed this run's verdict" in (claimreview_refusal(unreviewed) or "")
    other = RunStore(store_url)  # another desk imports the reviewed run: still the file's word there
    imported = import_run(other, to_json(reviewed, store.events(run_id)), source="their.json", by="Ben").summary
    assert not imported.own and "an imported run is the file's word" in (claimreview_refusal(imported) or "")
    assert claimreview_refusal(replace(imported, checker_verdict="REFUTED", checker_by="Ben")) is not None
    assert [r.id for r in other.list_runs()] == [imported.id]  # History lists it (marked)...
    assert other.list_runs(where=RunFilter(own_only=True)) == []  # ...the desk's own counts and wall times leave it out


def test_rating_scale_speaks_the_one_vocabulary_within_bounds() -> None:
    assert {label: value for label, (value, _) in RATINGS.items()} == {"SUPPORTED": 5, "NOT ENOUGH INFO": 3, "REFUTED": 1}
    assert set(RATINGS) == set(COMMON_LABELS)


def test_claimreview_problems_name_what_is_missing() -> None:
    problems = claimreview_problems({"@type": "ClaimReview", "reviewRating": {"ratingValue": 9, "bestRating": 5, "worstRating": 1}})
    for missing in (
        "claimReviewed: missing",
        "author: missing",
        "url: missing",
        "reviewRating.alternateName: missing",
        "outside worstRating",
    ):
        assert any(missing in p for p in problems), missing


def test_markdown_report_escapes_untrusted_text(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    report = to_markdown(store.get_run(run_id), store.events(run_id))  # type: ignore[arg-type]
    assert report.startswith("# Fact-check: Masks reduce transmission")
    assert "Checker's verdict | **NOT ENOUGH INFO** by Ana" in report
    assert "\\<img" in report, "the hostile page's markup is shown as text"
    assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(http|(?<!\\)javascript:", report), "and never as markup or a link"
    assert "## Evidence" in report and "## Model calls" in report


@pytest.mark.parametrize("fmt", ["json", "md", "csv", "claimreview"])
def test_every_format_exports_with_a_file_name(finished: tuple[RunStore, str], fmt: str) -> None:
    store, run_id = finished
    summary = store.get_run(run_id)
    assert summary is not None
    assert export_run(summary, store.events(run_id), fmt)
    name = export_filename(summary, fmt)
    assert name.startswith(f"debatedesk-{run_id}-masks-reduce") and "/" not in name


def test_a_run_without_verdict_has_no_claimreview(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_after=0)
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    run_id = events[0].run_id  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="has no verdict"):
        to_claimreview(services.store.get_run(run_id), events)  # type: ignore[union-attr,arg-type]


def record_of(store: RunStore, run_id: str) -> dict:  # type: ignore[type-arg]
    return json.loads(to_json(store.get_run(run_id), store.events(run_id)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.update(format="something.else"), ["format: must be 'debatedesk.run'"]),
        (lambda r: r.update(schema_version=7), ["schema_version: this app reads versions 1 and 2 (got 7)"]),
        (lambda r: r["run"].pop("claim"), ["run.claim: Field required"]),
        (
            lambda r: r["run"].update(status="done", created_at="yesterday"),
            ["run.status: Input should be", "run.created_at: Input should be a valid number"],
        ),
        (lambda r: r.update(events=[]), ["events: List should have at least 1 item"]),
        (lambda r: r["events"].append({"type": "Gossip", "at": 1}), ["unknown event type 'Gossip'"]),
        (
            lambda r: next(e for e in r["events"] if e["type"] == "VerdictReached")["verdict"].pop("label"),
            ["(VerdictReached): verdict.label: Field required"],
        ),
        (lambda r: r["events"][0].update(run_id="someone-else"), ["events[0].run_id: 'someone-else' does not match run.id"]),
        (lambda r: r["run"].update(verdict="TRUE"), ["run.verdict: 'TRUE' is not the last VerdictReached"]),
        (lambda r: r["run"]["totals"].update(model_calls=99), ["run.totals.model_calls: says 99 but the events add up to"]),
        (lambda r: r["run"]["config"]["debater"].update(api_key="sk-live-123"), ["run.config.debater.api_key: records never hold secrets"]),
        (lambda r: r.update(extra_field=1), ["extra_field: Extra inputs are not permitted"]),
    ],
)
def test_a_malformed_import_is_refused_with_every_reason(finished: tuple[RunStore, str], mutate, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    store, run_id = finished
    record = record_of(store, run_id)
    mutate(record)
    with pytest.raises(RecordError) as info:
        load_record(json.dumps(record))
    message = str(info.value)
    assert message.startswith("this file is not a valid DebateDesk run record:")
    for part in expected:
        assert part in message, message


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"\x00\xff not json", "not JSON"), (b"[1, 2]", "the top level must be an object"), (b"{}", "run: Field required")],
)
def test_garbage_is_refused_clearly(data: bytes, expected: str) -> None:
    with pytest.raises(RecordError, match=expected.replace("(", r"\(")):
        load_record(data)


def test_a_hand_written_minimal_record_is_accepted() -> None:
    evidence = {"id": "E1", "source": "corpus", "text": "Iron expands in heat."}
    record = hand_record(
        "The tower grows in summer",
        {"type": "EvidenceRetrieved", "at": 1700000001, "agent": "A", "round": 1, "evidence": evidence},
        {"type": "VerdictReached", "at": 1700000002, "verdict": {"label": "SUPPORTS", "cited": ["E1"]}},
        run_id="hand-1",
        status="completed",
        at=1700000000,
    )
    summary, events = load_record(json.dumps(record))
    assert summary.id == "hand-1" and len(events) == 3 and summary.event_count == 3


def test_the_record_schema_is_published(tmp_path: Path) -> None:
    schema = record_schema()
    assert schema["properties"]["schema_version"]["enum"] == [1, 2] and "run" in schema["required"]
    assert {"chain", "signature"} <= set(schema["properties"])


def test_the_override_and_its_audit_trail_are_in_every_export(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    summary, events = store.get_run(run_id), store.events(run_id)
    assert summary is not None and summary.checker_at is not None, "the store keeps when the checker set the verdict"
    at = re.escape(time.strftime("%Y-%m-%d", time.gmtime(summary.checker_at)))

    report = to_markdown(summary, events)
    assert re.search(rf"Checker's verdict \| \*\*NOT ENOUGH INFO\*\* by Ana at {at} \d\d:\d\d:\d\d UTC: Only one trial", report)
    assert re.search(
        rf"## Checker's interventions \(audit trail\)\n\n- {at} [\d:]+ UTC · Ana · set the verdict to \*\*NOT ENOUGH INFO\*\*", report
    )
    assert "## The model's verdict" in report and "  > “" in report, "the card: the label in one vocabulary and the quoted exhibits"

    record = json.loads(to_json(summary, events))["run"]
    assert (record["checker_verdict"], record["checker_by"], record["checker_note"]) == (
        "NOT ENOUGH INFO",
        "Ana",
        "Only one trial; wait for the review.",
    )
    assert record["checker_at"] == pytest.approx(summary.checker_at)

    rows = list(csv.DictReader(io.StringIO(export_run(summary, events, "csv"))))
    assert len(rows) == 1
    row = rows[0]
    assert (row["checker_verdict"], row["checker_by"], row["final_verdict"]) == ("NOT ENOUGH INFO", "Ana", "NOT ENOUGH INFO")
    assert row["model_verdict"] == row["model_verdict_before_override"] == common_label(summary.verdict or "")
    assert row["model_verdict_protocol_word"] == summary.verdict
    assert re.fullmatch(rf"{at} [\d:]+ UTC", row["checker_at"]) and row["checker_reason"] == "Only one trial; wait for the review."
    assert "Ana · set the verdict to NOT ENOUGH INFO" in row["audit_trail"] and "Only one trial" in row["audit_trail"]
    assert int(row["model_calls"]) == summary.cost.calls and row["rests_on"]

    doc = to_claimreview(summary, events)
    assert doc["editor"] == {"@type": "Person", "name": "Ana"} and doc["dateModified"] == time.strftime(
        "%Y-%m-%d", time.gmtime(summary.checker_at)
    )


def test_a_tampered_checker_time_is_refused_on_import(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    record = json.loads(to_json(store.get_run(run_id), store.events(run_id)))  # type: ignore[arg-type]
    record["run"]["checker_at"] += 3600
    with pytest.raises(RecordError, match="run.checker_at: is not the time of the last VerdictOverridden"):
        load_record(json.dumps(record))


def test_a_csv_cell_never_starts_a_formula(services: Services) -> None:
    services.chat_override = FakeChatModel()
    events = list(stream_run('=HYPERLINK("http://evil.example") masks work', fake_config(protocol="single"), services))
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert services.store is not None
    override_verdict(services.store, run_id, "REFUTED", "@SUM(A1) is not a note", "+Ana")
    summary = services.store.get_run(run_id)
    assert summary is not None
    row = next(csv.DictReader(io.StringIO(export_run(summary, services.store.events(run_id), "csv"))))
    assert row["claim"].startswith("'=") and row["checker_reason"].startswith("'@") and row["checker_by"].startswith("'+")


def report_of_a_masks_run(run_id: str, verdict: dict[str, Any]) -> str:
    """The markdown report of an imported completed run: one exhibit (E1) and this verdict."""
    evidence = {"id": "E1", "source": "corpus", "text": "Trials found masks reduce transmission."}
    record = hand_record(
        "Masks reduce transmission",
        {"type": "EvidenceRetrieved", "at": 1700000001, "agent": "A", "round": 1, "evidence": evidence},
        {"type": "VerdictReached", "at": 1700000002, "verdict": verdict},
        run_id=run_id,
        status="completed",
        at=1700000000,
        confidence=verdict["confidence"],
    )
    summary, events = load_record(json.dumps(record))
    return to_markdown(summary, events)


def test_the_markdown_report_never_rounds_a_probability_up_to_certainty() -> None:
    report = report_of_a_masks_run("sure-1", {"label": "SUPPORTS", "confidence": 0.996, "cited": ["E1"]})
    assert "confidence >0.99" in report
    assert "1.00" not in report, "0.996 is not a certainty"


def test_markdown_report_lists_the_prompt_tokens_the_server_reused(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    events = [
        *store.events(run_id),
        ModelCallCompleted(role="judge", model="m", tokens_in=180, tokens_out=1, tokens_reused=141, seconds=0.27),
    ]
    report = to_markdown(store.get_run(run_id), events)  # type: ignore[arg-type]
    assert "| # | role | model | tokens in | of which the server reused | tokens out | seconds |" in report
    assert re.search(r"\| \d+ \| judge \| m \| 180 \| 141 \| 1 \| 0\.27 \|", report)


def test_the_markdown_report_names_both_rulings_when_they_differ() -> None:
    beside = {"label": "NOT SUPPORTED", "confidence": 0.64, "decided_by": "panel of 3 judges", "says": "the panel voted NOT SUPPORTED, 64%"}
    verdict = {
        "label": "SUPPORTS",
        "confidence": 0.81,
        "cited": ["E1"],
        "decided_by": "calibrated reading of the debate's evidence",
        "stop_reason": "the panel voted NOT SUPPORTED, 64%; the evidence read after the debate says SUPPORTS, 81%. The calibrated ruling is the verdict",
        "beside": beside,
    }
    report = report_of_a_masks_run("two-1", verdict)
    assert "Two rulings differ: the panel voted NOT SUPPORTED, 64%; the evidence read after the debate says SUPPORTS, 81%." in report


def test_the_run_exports_claimreview_carries_the_checkers_whole_reason() -> None:
    reason = "The operator's figures show no change after masks were required on its ferries. " * 20  # about 1,600 characters
    record = hand_record(
        "Masks on ferries cut cases by half",
        {"type": "VerdictReached", "at": 2.0, "verdict": {"label": "SUPPORTS", "rationale": "A study says so."}},
        {"type": "VerdictOverridden", "at": 3.0, "label": "REFUTED", "note": reason, "by": "Ana", "model_verdict": {"label": "SUPPORTS"}},
        status="completed",
        verdict="SUPPORTS",
        checker_verdict="REFUTED",
        checker_by="Ana",
        checker_note=reason,
        checker_at=3.0,
    )
    summary, events = load_record(json.dumps(record))
    doc = to_claimreview(summary, events)
    assert doc["reviewRating"]["ratingExplanation"] == " ".join(reason.split()), "never cut"
    assert doc["reviewRating"]["name"] == "REFUTED" and claimreview_problems(doc) == []


def test_the_markdown_report_says_which_turn_repeats_the_opponent() -> None:
    search = "Adults aged 25-44 die at higher rates than children [E1], so the claim fails.\nLabel: REFUTES"
    turns = [
        {"id": "RAG-r1", "agent": "RAG", "round": 1, "text": "Children are the least likely to die.\nLabel: REFUTES"},
        {"id": "Search-r1", "agent": "Search", "round": 1, "text": search},
        {"id": "RAG-r2", "agent": "RAG", "round": 2, "text": search.replace("fails", "is wrong")},
        {"id": "Search-r2", "agent": "Search", "round": 2, "text": "RAG and I agree: [E1] settles it.\nLabel: REFUTES"},
    ]
    record = hand_record(
        "Children have the highest COVID-19 mortality",
        *({"type": "TurnCompleted", "at": 1700000001 + i, "turn": t} for i, t in enumerate(turns)),
        {"type": "VerdictReached", "at": 1700000009, "verdict": {"label": "REFUTES", "confidence": 0.8}},
        run_id="echo-1",
        status="completed",
        at=1700000000,
        verdict="REFUTES",
        confidence=0.8,
    )
    report = to_markdown(*load_record(json.dumps(record)))
    assert report.count("Nearly word for word") == 1
    rag_2 = report.index("**RAG**, round 2")
    assert report.index("*Nearly word for word Search's round 1 answer: the model repeated its opponent.*") > rag_2


def test_the_markdown_report_says_where_the_web_could_not_be_searched(services: Services) -> None:
    """Offline, the report said "web search on" and "Search searched web", and nothing of the corpus read instead."""
    config = with_settings(fake_config(protocol="toolmad"), "retrieval", web_search=True)
    events = list(stream_run(CLAIM, config, services))  # the services' web is dead
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert services.store is not None
    report = to_markdown(services.store.get_run(run_id), events)  # type: ignore[arg-type]
    failed = sum(1 for e in events if type(e).__name__ == "WebSearchUnavailable")
    assert failed >= 1 and f"| Corpus | demo; web search on, but unavailable for {failed} of its {failed} web queries |" in report
    assert "- 🌐 the web could not be searched for Search (round 1): no network \\(test\\); corpus search instead" in report
    assert "web search unavailable\\:" not in report, "the line says it once"


def test_a_report_whose_web_answered_says_only_that_it_was_on(finished: tuple[RunStore, str]) -> None:
    store, run_id = finished
    report = to_markdown(store.get_run(run_id), store.events(run_id))  # type: ignore[arg-type]
    assert "| Corpus | demo; web search on |" in report and "could not be searched" not in report
