"""Smoke test of bench/desk.py on the fake backend: desk and single on the same Check-COVID claims, every figure reported."""

from pathlib import Path

import pytest

from bench.desk import ROWS, ClaimRecord, deciding, run_bench, selective_accuracy, summarise, table
from bench.desk_rescore import stances_as
from pipelines.eval.datasets import load_dataset
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.stages.exhibits import same_text
from pipelines.stages.stance_aggregation import aggregate
from tests.conftest import CHECK_COVID, EVAL_SAMPLE
from tests.fakes import make_services

pytestmark = pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")


def test_desk_and_single_run_the_same_claims_and_report_every_figure(checkcovid_data_dir: Path, embedder, checkcovid_dir: Path) -> None:  # type: ignore[no-untyped-def]
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    columns, records, _ = run_bench(dataset, services, ["desk", "single"], backend="fake", limit=EVAL_SAMPLE, quiet=True)
    assert [r["id"] for r in records if r["protocol"] == "desk"] == [r["id"] for r in records if r["protocol"] == "single"]
    desk, single = columns["desk"], columns["single"]
    for key in ("binary_accuracy", "accuracy_3", "macro_f1_3", "ece", "selective_50", "selective_80", "deciding_found", "seconds_median"):
        assert desk[key] is not None, key
    assert single["ece"] is None, "single states no probability"
    assert desk["calls_per_claim"] > single["calls_per_claim"]
    assert all(r["exhibits"] for r in records if r["protocol"] == "desk"), "every desk claim keeps its exhibits' stances"
    read = [r for r in records if r["protocol"] == "desk" and not r["debated"]]
    for r in read:  # the fake has no calibration: a record scored again as read gives the run's own p(supported)
        again = aggregate(stances_as(r, "contrast", 1.0), None)
        assert again.calibrated == pytest.approx(r["p_supported"], abs=1e-3), r["id"]
    assert {r["reader"] for r in records if r["protocol"] == "desk"} == {DeskConfig().reader}, (
        "each record names the question it was read with"
    )
    with pytest.raises(SystemExit, match="read with the contrast question"):
        stances_as(read[0], "verdict", 1.0)  # same count of readings an exhibit, another question: not mistaken for it
    rendered = table(columns)
    assert all(title in rendered for title, _ in ROWS)


def test_a_run_read_with_both_questions_is_rescored_as_either(checkcovid_data_dir: Path, embedder, checkcovid_dir: Path) -> None:  # type: ignore[no-untyped-def]
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    both = ["desk.reader=both", "desk.orders=3", "desk.exhibits=5"]
    _, records, _ = run_bench(dataset, services, ["desk"], backend="fake", limit=EVAL_SAMPLE, settings=both, quiet=True)
    read = [r for r in records if not r["debated"]]
    assert read
    for r in read:
        again = aggregate(stances_as(r, "both", DeskConfig().contrast_share), None)
        assert again.calibrated == pytest.approx(r["p_supported"], abs=1e-3), r["id"]
    assert any(aggregate(stances_as(r, "contrast", 1.0), None).calibrated != pytest.approx(r["p_supported"], abs=1e-3) for r in read), (
        "the contrast question's readings are told apart from the separate ones"
    )


UNREAD = {"claim": "c", "predicted": None, "deciding_found": True, "calls": 1, "cached_calls": 0, "tokens": 1, "seconds": 1.0}


def record(gold: str, p: float | None) -> ClaimRecord:
    """A claim as selective accuracy sees it: its gold label and the protocol's p(supported); the rest is not read."""
    return ClaimRecord(id=gold, gold=gold, p_supported=p, raw_supported=p, **UNREAD)


def test_selective_accuracy_keeps_the_claims_the_protocol_is_surest_of() -> None:
    records = [record("SUPPORTS", 0.95), record("REFUTES", 0.1), record("SUPPORTS", 0.45), record("REFUTES", 0.55)]
    assert selective_accuracy(records, 0.5) == 1.0
    assert selective_accuracy(records, 1.0) == 0.5
    column = summarise(records, ceiling=1.0)
    assert column["binary_accuracy"] == 0.5 and column["ece"] is not None


def test_the_deciding_document_counts_when_an_exhibit_holds_its_passage_under_another_id() -> None:
    shared = "Of the patients, 19% were symptomatic."  # two papers print this passage; the search keeps one copy
    assert deciding({"gold"}, {"gold", "other"}, ["x"], set()) == (True, True)
    assert deciding({"gold"}, {"twin"}, ["Of the patients,  19% were SYMPTOMATIC."], {same_text(shared)}) == (True, False)
    assert deciding({"gold"}, {"other"}, ["Masks were worn."], {same_text(shared)}) == (False, False)
    assert deciding(set(), {"other"}, ["x"], set()) == (None, None)
