import pytest

from pipelines.tools.lexical import passage_tokens, tokenize
from pipelines.tools.stemmer import stem


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
    assert stem(word) == expected


def test_tokens_drop_stopwords_and_share_stems() -> None:
    assert tokenize("The vaccines were vaccinated") == ["vaccin", "vaccin"]
    assert tokenize("Children's masks") == ["children", "mask"]


def test_hyphenated_terms_match_their_joined_and_split_forms() -> None:
    assert set(tokenize("presymptomatic")) <= set(tokenize("pre-symptomatic"))
    assert {"sar", "cov", "2", "sarscov2"} <= set(tokenize("SARS-CoV-2"))


def test_the_title_is_indexed_with_the_passage() -> None:
    assert passage_tokens("Face masks", "They reduce spread.") == ["face", "mask", "reduc", "spread"]
