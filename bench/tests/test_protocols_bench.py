"""Smoke test of bench/protocols.py on the fake backend: every protocol on the same claims, one record each, resumed without running again."""

import json
import time
from pathlib import Path

import pytest

from bench.protocols import (
    EXTRA_ROWS,
    LoadWatch,
    chosen_claims,
    claims,
    columns_of,
    machines_line,
    machines_seconds_table,
    read_records,
    round_table,
    run_claim,
    run_part,
    stage_table,
    stated_p_supported,
    table,
)
from pipelines.core.config import RunConfig
from pipelines.eval.datasets import Dataset, load_dataset
from pipelines.eval.harness import evaluation_config
from pipelines.record.store import RunStore
from pipelines.run.llm.cache import DiskResponseCache
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.conftest import CHECK_COVID
from tests.fakes import make_services

pytestmark = pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")

PROTOCOLS = ["desk", "single", "toolmad", "radar"]


@pytest.fixture
def services(checkcovid_data_dir: Path, embedder: Embedder) -> Services:
    """Services over the indexed check-covid corpus (this module's claims come from it), not the demo corpus."""
    return make_services(checkcovid_data_dir, embedder)


@pytest.fixture
def dataset(checkcovid_dir: Path) -> Dataset:
    """Check-COVID's dev split: the claims these tests run."""
    return load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)


def test_every_protocol_answers_the_same_claims_and_a_second_run_resumes(services: Services, dataset: Dataset, tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    first = claims(dataset, labels="three", limit=3, skip=0)[:2]
    assert run_part(first, dataset, services, PROTOCOLS, records, backend="fake", quiet=True) == 2 * len(PROTOCOLS)
    rest = claims(dataset, labels="three", limit=3, skip=2)
    assert run_part(first + rest, dataset, services, PROTOCOLS, records, backend="fake", quiet=True) == len(PROTOCOLS), (
        "claims already answered are not run again"
    )
    rows = read_records(records)
    assert len(rows) == 3 * len(PROTOCOLS)
    assert {r["protocol"] for r in rows} == set(PROTOCOLS)
    for protocol in PROTOCOLS:
        assert [r["id"] for r in rows if r["protocol"] == protocol] == [i.id for i in first + rest]
    assert all(isinstance(r["load_max"], float) for r in rows), "each record keeps the most the load reached"
    assert all(set(r["machine"]) == {"cpu", "cores", "boot"} and r["machine"]["cores"] >= 1 for r in rows), "and its machine"
    assert machines_line(rows).endswith(f": {len(rows)}") and "boot " in machines_line(rows)
    assert machines_line([{"id": "x"}, *rows[:1]]).startswith("Records by machine: machine not recorded: 1; ")
    quiet = [r | {"load": [0.0, 0.0], "load_max": 0.0} for r in rows]  # the figures, whatever else this machine is running
    columns = columns_of(quiet, PROTOCOLS, {i.id for i in first + rest})
    assert columns["desk"]["claims"] == 3
    assert columns["desk"]["stated"] > 0 and columns["desk"]["ece_stated"] is not None, "desk states p(supported)"
    assert columns["single"]["stated"] == 0 and columns["single"]["ece_stated"] is None, "single states no confidence"
    assert all(columns[p]["seconds_median"] is not None for p in PROTOCOLS)
    rendered = table(columns)
    assert all(title in rendered for title, _ in EXTRA_ROWS)


def test_a_failed_run_is_run_again_at_the_next_start_and_the_newest_record_counts(
    services: Services, dataset: Dataset, tmp_path: Path
) -> None:
    item = claims(dataset, labels="three", limit=1, skip=0)[0]
    records = tmp_path / "records.jsonl"
    failed = {"protocol": "single", "id": item.id, "claim": item.claim, "gold": item.label, "predicted": None, "status": "failed",
              "error": "cannot reach the endpoint serving the model: Connection error."}  # fmt: skip
    records.write_text(json.dumps(failed) + "\n" + json.dumps(failed | {"protocol": "mad", "status": "completed", "error": ""}) + "\n")
    assert run_part([item], dataset, services, ["single", "mad"], records, backend="fake", quiet=True) == 1, "only the failed one"
    rows = read_records(records)
    assert [r["status"] for r in rows if r["protocol"] == "single"] == ["failed", "completed"], "the failed record stays in the file"
    columns = columns_of([r | {"load": [0.0, 0.0], "load_max": 0.0} for r in rows if r["protocol"] == "single"], ["single"], {item.id})
    assert columns["single"]["failed"] == 0 and columns["single"]["claims"] == 1, "the newest record is the one counted"


def test_a_cut_line_is_left_out_and_a_stated_side_becomes_p_supported(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"protocol": "desk", "id": "1"}) + "\n" + '{"protocol": "de')
    assert read_records(path) == [{"protocol": "desk", "id": "1"}]
    assert stated_p_supported("REFUTES", 0.8, None) == pytest.approx(0.2)
    assert stated_p_supported("SUPPORTS", 0.8, None) == 0.8
    assert stated_p_supported("NOT ENOUGH INFO", 0.9, None) is None
    assert stated_p_supported("REFUTES", 0.8, 0.3) == 0.3, "a protocol's own p(supported) wins"


def test_the_ruling_kept_beside_the_verdict_is_scored_on_the_same_claims() -> None:
    def rec(i: str, gold: str, label: str, beside: str) -> dict:  # type: ignore[type-arg]
        return {
            "protocol": "radar", "id": i, "claim": "c", "gold": gold, "predicted": label, "p_supported": 0.8 if label == "SUPPORTS" else 0.2,
            "raw_supported": None, "deciding_found": None, "calls": 3, "cached_calls": 0, "tokens": 10, "seconds": 1.0, "tokens_read": 5,
            "p_stated": 0.8 if label == "SUPPORTS" else 0.2, "status": "completed",
            "beside": {"label": beside, "confidence": None, "decided_by": "judge", "says": "the judge ruled"},
        }  # fmt: skip

    rows = [rec("1", "SUPPORTS", "SUPPORTS", "REFUTES"), rec("2", "REFUTES", "REFUTES", "REFUTES")]
    columns = columns_of(rows, ["radar"], {"1", "2"})
    assert columns["radar"]["binary_accuracy"] == 1.0
    assert columns["radar/beside"]["binary_accuracy"] == 0.5, "the judge's own ruling, scored on the same claims"
    assert columns["radar/beside"]["stated"] == 0, "the judge stated no confidence"


def test_a_run_helped_by_desks_cached_reading_is_also_counted_with_desks_seconds() -> None:
    def rec(protocol: str, i: str, seconds: float, cached: int) -> dict:  # type: ignore[type-arg]
        return {
            "protocol": protocol, "id": i, "claim": "c", "gold": "SUPPORTS", "predicted": "SUPPORTS", "p_supported": None,
            "raw_supported": None, "deciding_found": None, "calls": 5, "cached_calls": cached, "tokens": 10, "seconds": seconds,
            "tokens_read": 5, "p_stated": None, "status": "completed", "beside": None,
        }  # fmt: skip

    rows = [rec("desk", "1", 40.0, 0), rec("desk", "2", 60.0, 0), rec("toolmad", "1", 100.0, 51), rec("toolmad", "2", 150.0, 0)]
    columns = columns_of(rows, ["desk", "toolmad"], {"1", "2"})
    assert columns["toolmad"]["seconds_median"] == 125.0
    assert columns["toolmad"]["seconds_paid_median"] == 145.0, "claim 1 pays desk's 40 s; claim 2 read nothing from the cache"
    assert columns["toolmad"]["read_desks"] == 1
    assert columns["desk"]["seconds_paid_median"] == 50.0 and columns["desk"]["read_desks"] == 0
    alone = columns_of(rows[2:], ["toolmad"], {"1", "2"})
    assert alone["toolmad"]["seconds_paid_median"] is None, "without desk's records nothing can be added"


def test_the_seconds_of_each_machine_are_told_apart_when_the_claims_ran_on_two() -> None:
    amd = {"cpu": "AMD EPYC", "cores": 2, "boot": "aaaa"}
    intel = {"cpu": "Intel Xeon", "cores": 2, "boot": "bbbb"}

    def rec(protocol: str, i: str, seconds: float, machine: dict, load: float = 2.0) -> dict:  # type: ignore[type-arg]
        return {"protocol": protocol, "id": i, "calls": 5, "seconds": seconds, "load_max": load, "machine": machine}

    rows = [
        rec("toolmad", "1", 100.0, amd), rec("toolmad", "2", 300.0, amd), rec("toolmad", "3", 400.0, intel),
        rec("mad", "1", 40.0, amd), rec("mad", "3", 50.0, intel, load=3.5), rec("mad", "9", 1.0, intel),
    ]  # fmt: skip
    text = machines_seconds_table(rows, ["toolmad", "mad"], {"1", "2", "3"})
    assert text.splitlines()[2] == "| AMD EPYC, 2 cores, boot aaaa | 200.0 (2) | 40.0 (1) |"
    assert text.splitlines()[3] == "| Intel Xeon, 2 cores, boot bbbb | 400.0 (1) | n/a |", (
        "a loaded run and a claim not chosen are not timed"
    )
    assert machines_seconds_table(rows[:2], ["toolmad"], {"1", "2"}) == "", "one machine: the main table says it all"


def test_the_last_belief_is_scored_for_the_side_it_leans_to() -> None:
    def rec(i: str, gold: str, s: float, r: float) -> dict:  # type: ignore[type-arg]
        return {
            "protocol": "toolmad", "id": i, "claim": "c", "gold": gold, "predicted": gold, "p_supported": None, "raw_supported": None,
            "deciding_found": None, "calls": 5, "cached_calls": 0, "tokens": 10, "seconds": 1.0, "tokens_read": 5, "p_stated": None,
            "status": "completed", "beside": None,
            "beliefs": [{"round": 1, "over": "", "probabilities": {"SUPPORTS": 0.3, "REFUTES": 0.3, "NOT ENOUGH INFO": 0.4}},
                        {"round": 2, "over": "", "probabilities": {"SUPPORTS": s, "REFUTES": r, "NOT ENOUGH INFO": round(1 - s - r, 4)}}],
        }  # fmt: skip

    rows = [
        rec("1", "SUPPORTS", 0.6, 0.2),
        rec("2", "REFUTES", 0.25, 0.25),
        rec("3", "REFUTES", 0.1, 0.5),
        rec("4", "NOT ENOUGH INFO", 0.9, 0.0),
    ]
    figures = columns_of(rows, ["toolmad"], {"1", "2", "3", "4"})["toolmad"]
    assert figures["belief_auc"] == 1.0, "the supported claim's gap is above both refuted ones'"
    assert figures["belief_right"] == "2 of 3", "a tie takes no side; the NOT ENOUGH INFO claim is not counted"
    assert columns_of(rows[1:3], ["toolmad"], {"2", "3"})["toolmad"]["belief_auc"] is None, "one label only"


def test_a_claim_tried_before_counts_the_calls_it_read_back_and_is_left_out_of_the_seconds(
    services: Services, dataset: Dataset, tmp_path: Path
) -> None:
    # a store and a response cache of its own (the index is shared): other tests' runs of the claim are not "before"
    services.store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    services.response_cache = DiskResponseCache(tmp_path / "responses")  # on, as the bench runs
    item = claims(dataset, labels="three", limit=3, skip=0)[0]
    config = evaluation_config(RunConfig(), protocol="toolmad", backend="fake", corpus="check-covid")
    first = run_claim(item, dataset, services, "toolmad", config)
    again = run_claim(item, dataset, services, "toolmad", config)  # as after a part killed mid-claim: its calls are in the cache
    assert first["replayed_calls"] == 0 and again["replayed_calls"] > 0
    figures = columns_of([first | {"seconds": 100.0}, again | {"id": "other", "seconds": 1.0}], ["toolmad"], {item.id, "other"})["toolmad"]
    assert figures["replayed"] == 1 and figures["seconds_median"] == 100.0, "the replay's second is not a claim's time"
    busy = columns_of(
        [first | {"seconds": 100.0}, first | {"id": "other", "seconds": 180.0, "load": [2.1, 4.6]}], ["toolmad"], {item.id, "other"}
    )
    assert busy["toolmad"]["loaded"] == 1 and busy["toolmad"]["seconds_median"] == 100.0, "seconds beside other work are left out"
    peaked = first | {"id": "other", "load": [2.0, 2.1], "load_max": 4.2}  # work that came and went inside the run
    told = first | {"id": "third", "shared_machine": "tests ran beside it"}
    busier = columns_of([first, peaked, told], ["toolmad"], {item.id, "other", "third"})["toolmad"]
    assert busier["loaded"] == 2
    with LoadWatch(every_s=0.01) as watch:
        time.sleep(0.05)
    assert watch.most >= 0.0


def test_the_stage_table_says_where_each_protocols_model_time_went_from_its_stored_runs(
    services: Services, dataset: Dataset, tmp_path: Path
) -> None:
    records = tmp_path / "records.jsonl"
    item = claims(dataset, labels="three", limit=1, skip=0)[0]
    run_part([item], dataset, services, ["toolmad", "single"], records, backend="fake", quiet=True)
    rows = read_records(records)
    elsewhere = rows[0] | {"id": "another-claim", "run_id": "not-in-this-store"}  # a record whose run was stored elsewhere
    assert services.store is not None
    text = stage_table([*rows, elsewhere], services.store, ["toolmad", "single", "mad"], {item.id, "another-claim"})
    lines = text.splitlines()
    assert lines[0].startswith("| protocol | stage | model s (median) |")
    assert "| `toolmad` | all, 1 of 2 runs found |" in text, "a run not in the store is counted as not found, not as zero"
    toolmad = [line.split(" | ")[1] for line in lines if line.startswith("| `toolmad` |")]
    assert "judge" in toolmad and any("answer" in stage for stage in toolmad), toolmad
    assert any(line.startswith("| `single` | answer |") for line in lines)
    assert "`mad`" not in text, "a protocol without records has no rows"


def test_the_round_table_says_how_long_each_debate_took_to_reach_each_round_and_its_verdict(
    services: Services, dataset: Dataset, tmp_path: Path
) -> None:
    records = tmp_path / "records.jsonl"
    item = claims(dataset, labels="three", limit=1, skip=0)[0]
    run_part([item], dataset, services, ["toolmad"], records, backend="fake", quiet=True)
    quiet = tmp_path / "quiet.jsonl"  # the same debate without a belief read after each round
    run_part([item], dataset, services, ["radar"], quiet, backend="fake", settings=["belief.per_round=false"], quiet=True)
    assert services.store is not None
    rows = read_records(records) + read_records(quiet)
    text = round_table(rows, services.store, ["toolmad", "radar", "mad"], {item.id})
    found = {tuple(line.split(" | ")[:2]): line.split(" | ")[2:] for line in text.splitlines()[2:]}
    rounds = [int(k[1].rsplit(" ", 1)[1]) for k in found if k[0] == "| `toolmad`" and k[1].startswith("belief after round")]
    assert rounds == list(range(1, len(rounds) + 1)) and 1 <= len(rounds) <= RunConfig().toolmad.rounds, text
    seconds = [float(found[("| `toolmad`", f"belief after round {k}")][1].rstrip(" |")) for k in rounds]
    verdict = float(found[("| `toolmad`", "verdict")][1].rstrip(" |"))
    assert seconds == sorted(seconds) and seconds[-1] <= verdict, "later rounds are reached later, the verdict last"
    assert ("| `radar`", "verdict") in found and not any(k[0] == "| `radar`" and "round" in k[1] for k in found), (
        "a run stored without per-round belief has its verdict's row and no round rows"
    )
    assert not any(k[0] == "| `mad`" for k in found), "a protocol without records has no rows"


def test_claims_from_an_earlier_records_file_are_run_in_its_order(dataset: Dataset, tmp_path: Path) -> None:
    """--claims-from was accepted and ignored: a paired run ran the balanced sample instead of the file's claims."""
    import argparse
    import json

    picked = [dataset.items[7].id, dataset.items[2].id, dataset.items[11].id]
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("".join(json.dumps({"id": i, "protocol": "toolmad"}) + "\n" for i in picked))
    args = argparse.Namespace(claims_from=str(earlier), labels="three", limit=None)
    assert [i.id for i in chosen_claims(dataset, args)] == picked
    assert [i.id for i in chosen_claims(dataset, args)[1:]] == picked[1:], "--skip 1 runs the file's claims after its first"
    assert [i.id for i in chosen_claims(dataset, argparse.Namespace(claims_from=str(earlier), labels="three", limit=2))] == picked[:2]
    sample = argparse.Namespace(claims_from="", labels="three", limit=3)
    assert chosen_claims(dataset, sample) == claims(dataset, labels="three", limit=3, skip=0)
    assert chosen_claims(dataset, sample)[1:] == claims(dataset, labels="three", limit=3, skip=1), "--skip cuts the same claims"
