import json
from pathlib import Path

import pytest

from pipelines.eval.datasets import DatasetError, GoldSentence, load_dataset, sample_items
from pipelines.eval.labels import parse_label_map
from tests.conftest import find_check_covid

CHECK_COVID = find_check_covid()


def test_check_covid_dev_loads_with_labels_and_gold_sentences() -> None:
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=CHECK_COVID)
    assert len(dataset.items) == 160 and dataset.corpus == "check-covid"
    assert dataset.label_counts == {"SUPPORTS": 50, "REFUTES": 56, "NOT ENOUGH INFO": 54}
    first = dataset.items[0]
    assert first.raw_label == "REFUTE" and first.label == "REFUTES"
    assert first.gold_evidence == (GoldSentence("asnvwu1u", 0), GoldSentence("asnvwu1u", 3))
    assert load_dataset(CHECK_COVID, "train").label_counts["SUPPORTS"] == 264  # a folder path works too


def test_check_covid_refuses_the_test_split_and_a_wrong_folder(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="use one of train, dev"):
        load_dataset("check-covid", "test", checkcovid_dir=CHECK_COVID)
    with pytest.raises(DatasetError, match="DEBATEDESK_CHECKCOVID_DIR"):
        load_dataset("check-covid", "dev", checkcovid_dir=tmp_path)
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset(tmp_path / "nope.jsonl")


def test_a_sample_is_fixed_for_a_seed_and_balanced_across_labels() -> None:
    dataset = load_dataset("check-covid", "dev", checkcovid_dir=CHECK_COVID)
    one, again, other = dataset.sample(30, seed=0), dataset.sample(30, seed=0), dataset.sample(30, seed=1)
    assert [i.id for i in one.items] == [i.id for i in again.items]
    assert [i.id for i in one.items] != [i.id for i in other.items]
    assert one.label_counts == {"SUPPORTS": 10, "REFUTES": 10, "NOT ENOUGH INFO": 10}
    assert sample_items(dataset.items, None) == dataset.items
    whole = sample_items(dataset.items, len(dataset.items) + 5)  # a limit of the whole set: every claim, in the sample's order
    assert sorted(i.id for i in whole) == sorted(i.id for i in dataset.items)
    assert whole[:30] == one.items  # so the claims after the first 30 are the ones a 30-claim part did not read
    with pytest.raises(DatasetError, match="at least 1"):
        sample_items(dataset.items, 0)


def _write(tmp_path: Path, rows: list[object], name: str = "claims.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_desks_jsonl_with_its_own_label_spellings_and_gold_evidence(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"claim": "Masks reduce spread", "label": "TRUE", "evidence": [{"doc_id": "masks-01", "sentences": [0, 2]}]},
            {"claim": "Vaccines cause autism", "label": "Pants on fire", "id": "v1"},
            "",
            {"claim": "The moon is cheese", "label": "nei"},
        ],
    )
    dataset = load_dataset(path, label_map=parse_label_map(["Pants on fire=REFUTES"]))
    assert [(i.id, i.label) for i in dataset.items] == [("claims-1", "SUPPORTS"), ("v1", "REFUTES"), ("claims-4", "NOT ENOUGH INFO")]
    assert dataset.items[0].gold_evidence == (GoldSentence("masks-01", 0), GoldSentence("masks-01", 2))
    assert dataset.corpus is None


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"claim": "x"}], 'line 1: needs a "label"'),
        ([{"claim": "x", "label": "MISLEADING"}], "unknown label 'MISLEADING'"),
        ([{"label": "TRUE"}], 'needs a non-empty "claim"'),
        (["{not json"], "line 1: not valid JSON"),
        (["[1, 2]"], "expected a JSON object"),
        ([{"claim": "x", "label": "TRUE", "evidence": "doc-1"}], '"evidence" must be a list'),
        ([{"claim": "x", "label": "TRUE", "evidence": [{"doc_id": "d", "sentences": ["a"]}]}], "whole numbers"),
        ([{"claim": "x", "label": "TRUE", "id": "a"}, {"claim": "y", "label": "TRUE", "id": "a"}], "id 'a' appears more than once"),
        ([""], "no claims"),
    ],
)
def test_bad_jsonl_files_get_clear_messages(tmp_path: Path, rows: list[object], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        load_dataset(_write(tmp_path, rows))


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"claim": "café", "label": "TRUE"}'.encode("latin-1"))
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_dataset(path)
