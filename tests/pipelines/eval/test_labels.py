import pytest

from pipelines.eval.labels import LabelMappingError, canonical, classes, keeps, parse_label_map, require_canonical

S, R, N = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        # protocols: FEVER style, the courtroom's, RADAR's
        ("SUPPORTS", S),
        ("REFUTES", R),
        ("NOT ENOUGH INFO", N),
        ("SUPPORTED", S),
        ("NOT SUPPORTED", R),
        ("INCONCLUSIVE", N),
        ("TRUE", S),
        ("HALF-TRUE", N),
        ("FALSE", R),
        # datasets: Check-COVID, and everyday spellings
        ("SUPPORT", S),
        ("REFUTE", R),
        ("NOTENOUGHINFO", N),
        ("nei", N),
        ("Half true", N),
        ("  supported. ", S),
    ],
)
def test_every_vocabulary_maps_to_the_canonical_labels(label: str, expected: str) -> None:
    assert canonical(label) == expected


def test_unknown_or_missing_labels_map_to_none() -> None:
    assert canonical("MISLEADING") is None
    assert canonical(None) is None
    assert canonical("") is None


def test_an_extra_mapping_comes_first() -> None:
    extra = parse_label_map(["Pants on fire=REFUTES", "Mostly true=supports"])
    assert extra == {"Pants on fire": R, "Mostly true": S}
    assert canonical("PANTS ON FIRE!", extra) == R
    assert canonical("TRUE", extra) == S


def test_a_bad_mapping_entry_says_how_to_write_it() -> None:
    with pytest.raises(LabelMappingError, match="THEIR LABEL=SUPPORTS"):
        parse_label_map(["Pants on fire"])
    with pytest.raises(LabelMappingError, match="THEIR LABEL=SUPPORTS"):
        parse_label_map("x=MAYBE")


def test_an_unknown_dataset_label_names_where_and_how_to_map_it() -> None:
    with pytest.raises(LabelMappingError, match=r"claims.jsonl line 3: unknown label 'MISLEADING'.*--label-map"):
        require_canonical("MISLEADING", "claims.jsonl line 3")


def test_binary_mode_scores_supports_and_refutes_only() -> None:
    assert classes("three") == (S, R, N)
    assert classes("binary") == (S, R)
    assert keeps(S, "binary") and not keeps(N, "binary") and keeps(N, "three")
