"""bench/debate_paired.py reads two stored runs of a debate protocol on the same claims: each debate as it was stored."""

from pathlib import Path

import pytest

from bench.debate_paired import Debate, debates, protocol_start, repeats, same_verdict, table
from bench.protocols import claims, read_records, run_part
from pipelines.core.domain import Turn
from pipelines.core.events import ModelCallCompleted, RoundStarted, StageCompleted, StageStarted
from pipelines.eval.datasets import load_dataset
from tests.conftest import CHECK_COVID
from tests.fakes import make_services


def _debate(claim_id: str, read: int, ruling: str, verdict: str = "SUPPORTS", confidence: float | None = 0.9) -> Debate:
    seconds = {"debater": 10.0, "scorer": read / 100, "judge": 5.0}
    read_by = {"debater": read // 2, "scorer": read // 4, "judge": read - read // 2 - read // 4}
    return Debate(claim_id, read, read * 4 // 5, 30, seconds, read_by, 3, "judge", ruling, verdict, confidence)


def test_the_table_pairs_the_claims_both_ran_and_counts_what_stayed() -> None:
    first = {"a": _debate("a", 1000, "SUPPORTS"), "b": _debate("b", 2000, "REFUTES"), "only": _debate("only", 10, "SUPPORTS")}
    second = {"a": _debate("a", 500, "SUPPORTS"), "b": _debate("b", 1600, "SUPPORTS", confidence=0.904)}
    text = table(first, second, ["x", "y"])
    assert "…only" not in text, "a claim only one run has is not compared"
    assert "| …a | 1,000 / 500 | 500 / 250 | 250 / 125 | 250 / 125 | 30 / 30 | 10 / 5 |" in text and "| SUPPORTS |" in text
    assert "| REFUTES / SUPPORTS |" in text, "a ruling that changed shows both"
    last = text.splitlines()[-1]
    assert "2 claims in both runs" in last
    assert "0.65 (median of the claims' ratios; 0.50 to 0.80)" in last
    assert "prompt tokens computed (the server's cache left out): 0.65 (0.50 to 0.80; 1,200 and 840 a claim)" in last
    assert "The same own ruling: 1 of 2; the same verdict: 2 of 2" in last, "confidence within 0.005 is the same verdict"
    assert not same_verdict(_debate("a", 1, "S"), _debate("a", 1, "S", confidence=0.89))
    assert table(first, {}, ["x", "y"]) == "no claim is in both runs"


@pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")
def test_each_debate_is_read_from_its_stored_run(checkcovid_data_dir: Path, embedder, checkcovid_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    items = claims(dataset, labels="three", limit=2, skip=0)
    runs = {}
    for reader in ("generated", "sentences"):
        path = tmp_path / f"{reader}.jsonl"
        settings = [f"toolmad.faithfulness_reader={reader}", "belief.debate_when=always"]
        run_part(items, dataset, services, ["toolmad"], path, backend="fake", settings=settings, quiet=True)
        runs[reader] = (path, debates(checkcovid_data_dir, path, "toolmad"))
    assert services.store is not None
    for reader, (path, found) in runs.items():
        records = {r["id"]: r for r in read_records(path)}
        assert sorted(found) == sorted(records), f"{reader}: one debate a claim"
        for claim_id, debate in found.items():
            record = records[claim_id]
            events = services.store.events(record["run_id"])
            assert debate.verdict == record["verdict"] and debate.confidence == record["confidence"]
            own = record["beside"] or record
            assert (debate.ruling, debate.decided_by) == (own["label"] if record["beside"] else own["verdict"], own["decided_by"])
            assert debate.rounds == max(e.round for e in events if isinstance(e, RoundStarted))
            assert 0 < debate.read <= record["tokens_read"], "the debate is part of the run"
            assert 0 < debate.computed < debate.read, "the prompt tokens computed are part of what was read (it wrote too)"
            assert 0 < debate.calls <= sum(isinstance(e, ModelCallCompleted) for e in events)
            assert debate.seconds["scorer"] > 0 and debate.seconds["debater"] > 0
            assert sum(debate.read_by.values()) == debate.read, "every call of the debate is a debater's, the scorer's or the judge's"
    generated, sentences = runs["generated"][1], runs["sentences"][1]
    assert any(generated[c].rounds == sentences[c].rounds for c in generated), "a claim argued as long both ways"
    for claim_id in generated:
        if generated[claim_id].rounds == sentences[claim_id].rounds:
            assert sentences[claim_id].calls < generated[claim_id].calls, "the sentences reader writes no statements"
    assert "2 claims in both runs" in table(generated, sentences, ["generated", "sentences"])


def test_a_turn_repeats_when_half_its_runs_of_words_were_said_in_an_earlier_round() -> None:
    said = "the virus was found in the air of hospital rooms and on the surfaces near the patients' beds in two studies"
    first = [Turn(id="P-r1", agent="Politician", round=1, text=said)]
    again = Turn(id="S-r2", agent="Scientist", round=2, text=said + " and that is all")
    new = Turn(
        id="S-r2",
        agent="Scientist",
        round=2,
        text="the trials measured infection, not the virus on a surface, so the claim goes further than them",
    )
    half = Turn(id="P-r2", agent="Politician", round=2, text=said + " " + new.text)
    assert repeats(again, first) and not repeats(new, first)
    assert not repeats(half, first), "fewer than half of its runs were said before"
    assert not repeats(again, [Turn(id="P-r2", agent="Politician", round=2, text=said)]), "only earlier rounds count"
    assert not repeats(Turn(id="x", agent="P", round=2, text="too short"), first)


def test_the_protocols_own_work_starts_once_desks_reading_and_its_belief_are_done() -> None:
    """proclaim rules on every exhibit's admissibility before its round 1: that is the protocol's cost, desk's reading is not."""

    def at(t: float, event):  # type: ignore[no-untyped-def]
        return event.model_copy(update={"at": t})

    grounded = [
        at(1, StageStarted(stage="grounding")),
        at(2, StageCompleted(stage="grounding")),
        at(3, StageStarted(stage="belief")),
        at(4, StageCompleted(stage="belief")),
        at(5, StageStarted(stage="admissibility")),
        at(6, RoundStarted(round=1)),
    ]
    assert protocol_start(grounded) == 4
    assert protocol_start(grounded[:2] + grounded[4:]) == 2, "no belief read before the debate"
    assert protocol_start([at(1, StageStarted(stage="admissibility")), at(6, RoundStarted(round=1))]) == 6, "not grounded: round 1"
