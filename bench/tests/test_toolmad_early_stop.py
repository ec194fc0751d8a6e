"""bench/toolmad_early_stop.py replays Tool-MAD's stop rule on stored runs: it must agree with what the runs did."""

from pathlib import Path

import pytest

from bench.protocols import claims, read_records, run_part
from bench.toolmad_early_stop import Round, StoredRun, stop_round, stored_runs, table
from pipelines.core.config import RunConfig
from pipelines.eval.datasets import load_dataset
from tests.conftest import CHECK_COVID
from tests.fakes import make_services


def _run(*rounds: tuple[str | None, float, float], seconds: float = 300.0, gold: str = "SUPPORTS") -> StoredRun:
    return StoredRun(
        "c",
        gold,
        tuple(Round(k, label, f, ar, scored_at=100.0 * k, read=1000 * k) for k, (label, f, ar) in enumerate(rounds, 1)),
        seconds,
        4000,
    )


def test_a_debate_stops_at_the_first_round_whose_agreed_answers_pass_both_thresholds() -> None:
    run = _run(("SUPPORTS", 1.0, 0.65), (None, 1.0, 0.9), ("SUPPORTS", 0.8, 0.85))
    assert stop_round(run, 0.7, 0.8) == run.rounds[2], "round 1 fails AR, round 2 disagrees"
    assert stop_round(run, 0.7, 0.6) == run.rounds[0]
    assert stop_round(run, 0.9, 0.9) is None, "round 1 fails AR, round 2 disagrees, round 3 fails F: the judge rules"
    text = table([run, _run(("REFUTES", 0.2, 0.9), seconds=120.0)], [0.7], [0.8, 0.6])
    rows = text.splitlines()
    assert rows[0].startswith("| F at least | AR at least | stop after round 1 | stop after round 2 | stop after round 3 | to the judge")
    assert rows[2] == "| 0.7 | 0.8 | 0 | 0 | 1 | 1 | 1 of 1 | 210 | 3,500 | 0.88 |", "the stopped run counts until round 3's last score"
    assert rows[3] == "| 0.7 | 0.6 | 1 | 0 | 0 | 1 | 1 of 1 | 110 | 2,500 | 0.62 |"


@pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")
# shipped; F low enough that the fake's first claim stops at round 1 and AR (0.83 and 0.77 on the fake) high enough that its second does not
@pytest.mark.parametrize(("faithfulness", "relevance"), [(None, None), (0.3, 0.8)])
def test_the_replayed_rule_ends_each_stored_run_as_it_ended(
    faithfulness: float | None, relevance: float | None, checkcovid_data_dir: Path, embedder, checkcovid_dir: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    records = tmp_path / "records.jsonl"
    items = claims(dataset, labels="three", limit=2, skip=0)
    settings = (
        [] if faithfulness is None else [f"toolmad.faithfulness_threshold={faithfulness}", f"toolmad.relevance_threshold={relevance}"]
    )
    run_part(items, dataset, services, ["toolmad"], records, backend="fake", settings=settings, quiet=True)
    assert services.store is not None
    found = sorted(read_records(records), key=lambda r: r["id"])
    runs = sorted(stored_runs([*found, found[0] | {"protocol": "radar"}], services.store), key=lambda r: r.claim_id)
    assert [r.claim_id for r in runs] == [r["id"] for r in found], "one run a claim, toolmad's only"
    shipped = RunConfig().toolmad
    f = shipped.faithfulness_threshold if faithfulness is None else faithfulness
    ar = shipped.relevance_threshold if relevance is None else relevance
    ended = []
    for run, record in zip(runs, found, strict=True):
        assert [r.number for r in run.rounds] == list(range(1, len(run.rounds) + 1))
        assert all(a.scored_at <= b.scored_at for a, b in zip(run.rounds, run.rounds[1:], strict=False))
        stop = stop_round(run, f, ar)
        assert (stop is not None) == (record["decided_by"] == "consensus"), (run, record["decided_by"])
        assert stop is None or stop.number == len(run.rounds), "a run that stopped argued no round after it"
        reads = [r.read for r in run.rounds]
        assert reads[0] > 0 and reads == sorted(reads) and reads[-1] <= run.read, "the debate's tokens grow round by round"
        assert run.read <= record["tokens_read"], "the debate is part of the run"
        ended.append(record["decided_by"])
    assert ended == (["judge", "judge"] if faithfulness is None else ["consensus", "judge"]), "both ways are replayed"
