import random
from pathlib import Path

import numpy as np
import pytest

from pipelines.run.tools import lexical
from pipelines.run.tools.lexical import LexicalIndex, passage_tokens, tokenize


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("agreed", "agre"),
        ("hopping", "hop"),
        ("relational", "relat"),
        ("generalizations", "gener"),
        ("vaccinated", "vaccin"),
        ("vaccines", "vaccin"),
        ("adjustment", "adjust"),
        ("controll", "control"),
        ("as", "as"),
        ("covid19", "covid19"),
    ],
)
def test_porter_stems_match_the_published_examples(word: str, expected: str) -> None:
    assert tokenize(word) == ([expected] if word not in lexical.STOPWORDS else [])


def test_tokens_drop_stopwords_and_share_stems() -> None:
    assert tokenize("The vaccines were vaccinated") == ["vaccin", "vaccin"]
    assert tokenize("Children's masks") == ["children", "mask"]


def test_hyphenated_terms_match_their_joined_and_split_forms() -> None:
    assert set(tokenize("presymptomatic")) <= set(tokenize("pre-symptomatic"))
    assert {"sar", "cov", "2", "sarscov2"} <= set(tokenize("SARS-CoV-2"))


def test_the_title_is_indexed_with_the_passage() -> None:
    assert passage_tokens("Face masks", "They reduce spread.") == ["face", "mask", "reduc", "spread"]


@pytest.mark.parametrize("seed", range(5))
def test_top_rows_are_those_of_a_stable_sort_of_every_score(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.choice([0.0, 0.5, 1.25, 2.0, 3.5], size=5000).astype(np.float32)  # many ties, at the cut too
    for n in (1, 7, 100, 5000):
        expected = [i for i in np.argsort(-scores, kind="stable")[:n] if scores[i] > 0]
        assert LexicalIndex.top(scores, n).tolist() == expected
    assert LexicalIndex.top(np.zeros(10, dtype=np.float32), 5).tolist() == []


def test_scores_are_bm25s_own_to_the_last_bit() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(300)]
    tokens = [[rng.choice(words[: rng.randint(5, 300)]) for _ in range(rng.randint(1, 40))] for _ in range(2000)]
    index = LexicalIndex.build([f"p{i}" for i in range(2000)], [f"d{i // 3}" for i in range(2000)], tokens, "r1")
    for _ in range(50):
        query = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))  # repeated words included
        known = [w for w in tokenize(query) if w in index._bm25.vocab_dict]  # type: ignore[attr-defined]
        expected = index._bm25.get_scores(known) if known else np.zeros(2000, dtype=np.float32)  # type: ignore[attr-defined]
        assert np.array_equal(index.scores(query), np.asarray(expected, dtype=np.float32))


def test_an_index_written_with_another_tokenizer_is_rebuilt_not_mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved index whose tokens came from an older stemmer or stopword list must not answer queries tokenized anew."""
    index = LexicalIndex.build(["p1"], ["d1"], [tokenize("vaccines work")], revision="r1")
    index.save(tmp_path / "bm25")
    assert LexicalIndex.load(tmp_path / "bm25") is not None
    monkeypatch.setattr(lexical, "FORMAT_VERSION", lexical.FORMAT_VERSION + 1)
    assert LexicalIndex.load(tmp_path / "bm25") is None, "an index of another format version is reported missing, so it is rebuilt"
