"""The evaluation harness end to end on the fake backend: 10 Check-COVID dev claims, scored, stored, repeated from the cache."""

from pathlib import Path

import pytest

from pipelines.core.config import RunConfig
from pipelines.eval import metrics
from pipelines.eval.datasets import Dataset, EvalItem, GoldSentence, load_dataset
from pipelines.eval.harness import ClaimScore, build_report, evaluate, evaluation_config, format_report, score_claim
from pipelines.eval.records import EvalStore, write_report_files
from pipelines.record.digest import Cost
from pipelines.run.batch import ClaimOutcome
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.conftest import EVAL_SAMPLE
from tests.fakes import make_services


def test_ten_dev_claims_on_the_fake_backend_are_run_scored_stored_and_repeat_from_the_cache(
    checkcovid_data_dir: Path, checkcovid_dir: Path, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    services = make_services(checkcovid_data_dir, embedder, cache=True)
    assert services.response_cache is not None
    services.response_cache.clear()  # type: ignore[attr-defined]
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    config = evaluation_config(RunConfig(), protocol="single", backend="fake", corpus="check-covid")
    progress: list[tuple[int, int]] = []
    report = evaluate(
        dataset, config, services, limit=EVAL_SAMPLE, seed=0, concurrency=2, on_outcome=lambda o, d, t: progress.append((d, t))
    )

    assert report.claims == EVAL_SAMPLE and report.failed == 0 and progress[-1] == (10, 10)
    assert [r.id for r in report.rows] == [i.id for i in dataset.sample(EVAL_SAMPLE, seed=0).items]
    # The headline figures are the metrics of the rows.
    assert report.accuracy == pytest.approx(sum(r.correct for r in report.rows) / 10)
    assert sum(map(sum, report.confusion.counts)) == 10
    assert report.macro_f1 == pytest.approx(sum(s.f1 for s in report.per_class.values()) / 3)
    assert report.calibration.ece is None and report.calibration.covered == 0  # `single` states no confidence
    assert report.evidence_recall is not None and 0 < report.evidence_recall <= 1 and report.evidence_recall_claims == 10
    assert report.document_recall is not None and report.document_recall > 0
    # Per claim: calls, tokens, retrievals, time, and a normal stored run behind each row.
    assert services.store is not None
    for row in report.rows:
        cost = row.cost
        assert cost.calls == 4 and cost.tokens_in > 0 and cost.tokens_out > 0 and row.retrieval_calls == 1 and cost.wall_seconds > 0
        stored = services.store.get_run(row.run_id or "")
        assert stored is not None and stored.status == "completed" and stored.claim == row.claim
    assert report.cost.cached_calls == 0

    # Kept on disk and in the run database, comparable later.
    json_path, csv_path = write_report_files(report, tmp_path / "evals")
    assert json_path.is_file() and len(csv_path.read_text().splitlines()) == 11
    store = EvalStore(services.store.engine)
    store.save(report)
    assert store.get(report.id) == report and report.id in [r.id for r in store.recent()]

    # The same evaluation again: every model call comes from the response cache, and the verdicts are the same.
    again = evaluate(dataset, config, services, limit=EVAL_SAMPLE, seed=0, concurrency=2)
    assert again.cost.cached_calls == again.cost.calls == 40  # 10 claims: the query, the answer and the belief in its 2 orders
    assert [r.predicted for r in again.rows] == [r.predicted for r in report.rows]
    assert again.cost.tokens_in == 0
    text = format_report(report)
    assert "accuracy" in text and "n/a: the single verdicts carry no confidence" in text


def test_a_failed_run_counts_as_wrong_and_is_reported(checkcovid_data_dir: Path, checkcovid_dir: Path, embedder: MiniLMEmbedder) -> None:
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir).sample(3, seed=0)
    victim = dataset.items[1].claim.split()[0:3]
    services = make_services(checkcovid_data_dir, embedder, chat=FakeChatModel(fail_when=f"Claim: {' '.join(victim)}"))
    config = evaluation_config(RunConfig(), protocol="single", backend="fake", corpus="check-covid")
    report = evaluate(dataset, config, services)
    assert report.failed == 1 and report.claims == 3
    failed = report.rows[1]
    assert failed.status == "failed" and failed.predicted is None and not failed.correct and "told to fail" in failed.error
    assert report.confusion.columns[-1] == metrics.NO_VERDICT


def test_binary_mode_runs_only_supports_and_refutes_claims(
    checkcovid_data_dir: Path, checkcovid_dir: Path, embedder: MiniLMEmbedder
) -> None:
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    config = evaluation_config(RunConfig(), protocol="single", backend="fake", corpus="check-covid")
    report = evaluate(dataset, config, services, labels="binary", limit=4)
    assert report.claims == 4 and {r.gold for r in report.rows} == {"SUPPORTS", "REFUTES"}
    assert set(report.per_class) == {"SUPPORTS", "REFUTES"} and report.confusion.rows == ("SUPPORTS", "REFUTES")


def _outcome(verdict: str | None, confidence: float | None, retrieved: tuple[tuple[str, int], ...] = ()) -> ClaimOutcome:
    return ClaimOutcome(
        index=0, id="x", claim="c", status="completed" if verdict else "failed", verdict=verdict, confidence=confidence,
        retrieved_sentences=retrieved, cost=Cost(calls=3),
    )  # fmt: skip


def test_scoring_maps_protocol_labels_and_computes_calibration_from_stated_confidence() -> None:
    """A courtroom-style and a RADAR-style verdict are scored on the canonical labels; ECE uses their confidence."""
    items = [
        EvalItem("a", "c", "SUPPORTS", (GoldSentence("d1", 0), GoldSentence("d1", 2))),
        EvalItem("b", "c", "REFUTES"),
        EvalItem("c", "c", "NOT ENOUGH INFO"),
        EvalItem("d", "c", "REFUTES"),
    ]
    outcomes = [
        _outcome("SUPPORTED", 0.9, (("d1", 0), ("d1", 1))),
        _outcome("FALSE", 0.9),
        _outcome("HALF-TRUE", 0.6),
        _outcome("MISLEADING", 0.6),
    ]
    rows = [score_claim(i, o) for i, o in zip(items, outcomes, strict=True)]
    assert [r.predicted for r in rows] == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO", None]
    assert "not in the label mapping" in rows[3].error
    assert rows[0].evidence_recall == 0.5 and rows[0].document_found is True and rows[1].evidence_recall is None
    report = build_report(
        rows, labels="three", dataset=Dataset("t", "all", tuple(items)), config=RunConfig(), seed=0, limit=None, seconds=1.0
    )
    assert report.accuracy == 0.75
    # Bin 0.9: two right at 0.9 (gap 0.1); bin 0.6: one right, one wrong at 0.6 (gap 0.1) -> ECE 0.1.
    assert report.calibration.ece == pytest.approx(0.1)
    assert report.evidence_recall == 0.5 and report.evidence_recall_claims == 1
    # All four claims read "c" with three different gold labels: answered alike, at most two (the REFUTES) are right.
    assert (report.ceiling, report.conflicting_claims) == (0.5, 4)
    saved = report.model_dump(mode="json")
    assert saved["ceiling"] == 0.5, "saved with the report (CSV, JSON, --json)"
    saved.pop("ceiling"), saved.pop("conflicting_claims")
    assert report.model_validate(saved).ceiling == 0.5, "a report saved before the ceiling existed gets it from its rows"
    assert "ceiling         0.500 (4 of the 4 claims share their exact text with a claim of another gold label" in format_report(report)


def test_a_report_saved_before_the_cost_was_one_field_still_loads() -> None:
    row = ClaimScore.model_validate(
        {"id": "a", "claim": "c", "gold": "SUPPORTS", "predicted": None, "verdict": None, "confidence": None, "correct": False,
         "evidence_recall": None, "document_found": None, "status": "failed", "model_calls": 3, "tokens_in": 40, "seconds": 1.5}
    )  # fmt: skip
    assert row.cost == Cost(calls=3, tokens_in=40, wall_seconds=1.5)
    assert {k: row.flat_row()[k] for k in ("model_calls", "tokens_in", "seconds")} == {"model_calls": 3, "tokens_in": 40, "seconds": 1.5}
