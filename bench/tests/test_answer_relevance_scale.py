"""bench/answer_relevance_scale.py reads the questions the runs stored and scores them on MiniLM's scale as the app does."""

from pathlib import Path

import pytest

from bench.answer_relevance_scale import Scale, ScoredAnswer, calibrated, groups_of, questions_of, scale, scored_answers, table
from bench.protocols import claims, read_records, run_part
from pipelines.eval.datasets import load_dataset
from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.conftest import CHECK_COVID
from tests.fakes import make_services


def test_the_detail_gives_back_each_question_even_one_with_brackets_or_a_bar() -> None:
    detail = "mean cosine of the claim with 3 generated question(s): Does X (in mice) work? (0.89) | Is A | B true? (0.30) | Why? (-0.05)"
    assert questions_of(detail) == ("Does X (in mice) work?", "Is A | B true?", "Why?")
    assert questions_of("the answer is empty") == ()


def test_the_threshold_is_the_lowest_at_which_few_enough_answers_pass_against_another_claim() -> None:
    result = Scale(own=(0.6,), other=(0.1,) * 90 + (0.52,) * 6 + (0.7,) * 4, outranked=(0.9,))
    assert calibrated(result, 0.05) == 0.55, "at 0.5 a tenth pass; at 0.55 4 in 100"
    assert calibrated(result, 0.0) == 0.75
    assert calibrated(result, 0.10) == 0.15
    assert table(result, [0.5]).splitlines()[2] == "| 0.5 | 1.00 (1 of 1) | 0.100 |"


def test_an_answer_is_never_set_against_a_claim_of_its_own_group(embedder: MiniLMEmbedder) -> None:
    groups = {
        "Masks reduce the spread of respiratory viruses.": "a",
        "Masks do not reduce the spread of respiratory viruses.": "a",
        "Vitamin D cures COVID-19.": "b",
        "Bats carry coronaviruses.": "c",
        "Remdesivir shortens hospital stays.": "d",
    }
    answer = ScoredAnswer("Masks reduce the spread of respiratory viruses.", "RAG-r1", ("Do masks reduce the spread of viruses?",), 0.0)
    result = scale([answer], groups, embedder, others=10)
    assert len(result.other) == 3, "the sibling claim is left out and only three others exist"
    assert result.own[0] > max(result.other) and result.outranked == (1.0,)


@pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")
def test_the_stored_questions_give_back_the_ar_each_run_stored(
    checkcovid_data_dir: Path, embedder: MiniLMEmbedder, checkcovid_dir: Path, tmp_path: Path
) -> None:
    services = make_services(checkcovid_data_dir, embedder)
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir)
    records = tmp_path / "records.jsonl"
    run_part(claims(dataset, labels="three", limit=2, skip=0), dataset, services, ["toolmad"], records, backend="fake", quiet=True)
    assert services.store is not None
    answers = scored_answers(services.store, [r["run_id"] for r in read_records(records)])
    assert {a.claim for a in answers} == {i.claim for i in claims(dataset, labels="three", limit=2, skip=0)}, "both claims' answers"
    assert all(len(a.questions) == 3 for a in answers), "the app's three questions an answer, each read back"
    result = scale(answers, groups_of(dataset), embedder, others=5)
    assert result.own == pytest.approx([a.stored for a in answers], abs=2e-3), "AR recomputed from the stored questions is the run's"
    assert len(result.other) == 5 * len(answers)
