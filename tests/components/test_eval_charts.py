"""The Benchmark page's figures, built from hand-made evaluations without Streamlit."""

import pytest

from components.eval_charts import (
    axis_label,
    build_accuracy_cost_figure,
    build_confusion_figure,
    build_reliability_figure,
    build_selective_figure,
    claims_frame,
    results_frame,
    selective_curves,
)
from pipelines.core.config import RunConfig
from pipelines.eval.datasets import Dataset
from pipelines.eval.harness import ClaimScore, EvalReport, build_report


def _row(i: int, gold: str, predicted: str | None, confidence: float | None, calls: int = 4, seconds: float = 2.0) -> ClaimScore:
    return ClaimScore(
        id=f"c{i}", claim=f"claim {i}", gold=gold, predicted=predicted, verdict=predicted, confidence=confidence,
        correct=predicted == gold, evidence_recall=0.5, document_found=True, status="completed" if predicted else "failed",
        model_calls=calls, tokens_in=1000, tokens_out=200, retrieval_calls=2, seconds=seconds,
    )  # fmt: skip


def _report(protocol: str, rows: list[ClaimScore]) -> EvalReport:
    config = RunConfig().with_backend("fake").model_copy(update={"protocol": protocol})
    return build_report(rows, labels="three", dataset=Dataset("t", "dev", ()), config=config, seed=0, limit=None, seconds=9.0)


@pytest.fixture
def reports() -> list[EvalReport]:
    courtroom = _report(
        "proclaim",
        [
            _row(0, "SUPPORTS", "SUPPORTS", 0.95, calls=12, seconds=6.0),
            _row(1, "REFUTES", "REFUTES", 0.95, calls=12, seconds=6.0),
            _row(2, "REFUTES", "SUPPORTS", 0.55, calls=12, seconds=6.0),
            _row(3, "NOT ENOUGH INFO", None, None, calls=12, seconds=6.0),
        ],
    )
    single = _report("single", [_row(0, "SUPPORTS", "SUPPORTS", None), _row(1, "REFUTES", "NOT ENOUGH INFO", None)])
    return [courtroom, single]


def test_accuracy_and_cost_panels_carry_each_evaluations_figures(reports: list[EvalReport]) -> None:
    fig = build_accuracy_cost_figure(reports)
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["accuracy"].y) == [0.5, 0.5]
    assert list(by_name["model calls"].y) == [12.0, 4.0]
    assert list(by_name["seconds"].y) == [6.0, 2.0]
    assert list(by_name["tokens (thousands)"].y) == [1.2, 1.2]
    assert list(by_name["accuracy"].x) == [axis_label(r) for r in reports]


def test_reliability_diagram_plots_bins_with_claims_and_names_protocols_without_confidence(reports: list[EvalReport]) -> None:
    fig = build_reliability_figure(reports)
    assert fig.data[0].name == "perfectly calibrated"
    curve = fig.data[1]
    assert list(curve.x) == pytest.approx([0.55, 0.95]) and list(curve.y) == [0.0, 1.0]
    assert "ECE 0.217" in curve.name  # (1 claim x gap 0.55 + 2 claims x gap 0.05) / 3 = 0.2167
    assert len(fig.data) == 2 and "no confidence stated by: single" in fig.layout.title.text


def test_confusion_matrix_heatmap_has_gold_rows_and_predicted_columns(reports: list[EvalReport]) -> None:
    heat = build_confusion_figure(reports[0]).data[0]
    assert list(heat.y) == ["SUPPORTS", "REFUTES", "NEI"]
    assert list(heat.x) == ["SUPPORTS", "REFUTES", "NEI", "(no verdict)"]
    assert [list(r) for r in heat.z] == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1]]


def test_tables_have_one_row_per_evaluation_and_per_claim(reports: list[EvalReport]) -> None:
    table = results_frame(reports)
    assert list(table["accuracy"]) == [0.5, 0.5] and list(table["ECE"].isna()) == [False, True]
    assert list(table["calls / claim"]) == [12.0, 4.0] and list(table["ECE claims"]) == [3, 0]
    assert len(claims_frame(reports[0])) == 4


def test_selective_accuracy_is_shown_for_every_evaluation_that_states_a_confidence(reports: list[EvalReport]) -> None:
    table = results_frame(reports)
    assert table["sel. acc. @50%"].iloc[0] == 1.0  # the surer half of proclaim's 3 stated confidences: 2 claims at 0.95, both right
    assert table["sel. acc. @80%"].iloc[0] == 1.0  # 80% of 3 claims rounds to the same 2
    assert table["sel. acc. @50%"].isna().tolist() == [False, True]  # single states none
    curves = selective_curves(reports)
    assert [name for name, _ in curves] == [results_frame(reports[:1])["evaluation"][0]]
    fig = build_selective_figure(curves)
    assert list(fig.data[0].y)[-1] == pytest.approx(2 / 3) and list(fig.data[0].x)[-1] == 1.0
    assert "no evaluation here states a confidence" in build_selective_figure([]).layout.title.text
