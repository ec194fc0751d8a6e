"""The one verdict vocabulary: each word the two old tables disagreed on reads the same in both views.

The canonical view (``canonical``: what scoring and dataset loading compare) and the display view (``common_label``:
what the card, History, the queue's review and ClaimReview say) are two readings of one table, so a word can never be
SUPPORTS to the evaluation and left as written on the card, or the other way round.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.eval.datasets import load_jsonl
from pipelines.eval.labels import require_canonical
from pipelines.record.claimreview import RATINGS
from pipelines.record.labels import COMMON_LABELS, DISPLAY, WORDS, canonical, checker_label, common_label, normalise

DISPUTED = [  # word, canonical, display: decided by PolitiFact's scale, ClaimReview's alternateName and the datasets
    ("MOSTLY-TRUE", "SUPPORTS", "SUPPORTED"),
    ("Mostly True", "SUPPORTS", "SUPPORTED"),
    ("MOSTLY-FALSE", "REFUTES", "REFUTED"),
    ("mostly false", "REFUTES", "REFUTED"),
    ("half true", "NOT ENOUGH INFO", "NOT ENOUGH INFO"),
    ("HALF-TRUE", "NOT ENOUGH INFO", "NOT ENOUGH INFO"),
    ("Contradicts", "REFUTES", "REFUTED"),
    ("CONTRADICT", "REFUTES", "REFUTED"),
    ("NOT ENOUGH INFORMATION", "NOT ENOUGH INFO", "NOT ENOUGH INFO"),
    ("Pants on Fire!", "REFUTES", "REFUTED"),
]


@pytest.mark.parametrize(("word", "label", "shown"), DISPUTED)
def test_each_disputed_word_reads_the_same_in_both_views(word: str, label: str, shown: str) -> None:
    assert canonical(word) == label
    assert common_label(word) == shown
    assert checker_label(word) == shown  # a checker may set it, and it is stored as the common word


@pytest.mark.parametrize(("word", "label", "shown"), DISPUTED)
def test_a_dataset_with_a_disputed_word_loads_without_a_label_map(word: str, label: str, shown: str) -> None:
    assert require_canonical(word, "line 1") == label


def test_a_politifact_scale_dataset_loads_onto_the_three_classes(tmp_path: Path) -> None:
    path = tmp_path / "politifact.jsonl"
    scale = ["True", "Mostly True", "Half True", "Mostly False", "False", "Pants on Fire"]
    path.write_text("".join(f'{{"claim": "claim {i}", "label": "{word}"}}\n' for i, word in enumerate(scale)))
    gold = [item.label for item in load_jsonl(path).items]
    assert gold == ["SUPPORTS", "SUPPORTS", "NOT ENOUGH INFO", "REFUTES", "REFUTES", "REFUTES"]


def test_this_desks_own_claimreview_rating_reads_back_as_its_verdict() -> None:
    """What this desk publishes as reviewRating.alternateName reads back as the verdict it was published for."""
    for verdict, (_value, alternate_name) in RATINGS.items():
        assert common_label(alternate_name) == verdict


def test_one_table_no_word_twice_and_both_views_cover_three_verdicts() -> None:
    keys = [normalise(w.word) for w in WORDS]
    assert len(keys) == len(set(keys)), "a spelling is in the table twice"
    assert set(DISPLAY.values()) == set(COMMON_LABELS) and len(COMMON_LABELS) == 3
    for word in WORDS:
        assert common_label(word.word) == DISPLAY[word.label]


def test_a_word_outside_the_table_stays_as_written_and_is_no_checkers_verdict() -> None:
    assert canonical("Misleading") is None
    assert common_label("Misleading") == "Misleading"
    with pytest.raises(ValueError, match="is not a verdict here"):
        checker_label("Misleading")
