"""bench/belief_reader.py's offline parts: the stance tags and the comparison of the readings."""

from bench.belief_reader import VARIANTS, analyse, tagged
from pipelines.core.domain import Evidence


def _reading(s: float, r: float) -> dict:  # type: ignore[type-arg]
    return {"probabilities": {"SUPPORTS": s, "REFUTES": r, "NOT ENOUGH INFO": round(1 - s - r, 4)}}


def test_each_item_opens_with_the_stance_desk_read_for_it_and_an_unread_item_is_left_as_it_was() -> None:
    items = [
        Evidence(id="E1", source="corpus", title="t", text="Masks cut spread."),
        Evidence(id="E2", source="corpus", title="u", text="x"),
    ]
    out = tagged(items, {"E1": {"SUPPORTS": 0.2, "REFUTES": 0.7, "UNRELATED": 0.1}})
    assert out[0].text == "(desk read this item as contradicting the claim) Masks cut spread."
    assert out[1].text == "x"


def test_a_reading_that_tells_the_sides_apart_scores_an_auc_of_one_and_a_flat_one_a_half() -> None:
    def row(gold: str, s: float, r: float) -> dict:  # type: ignore[type-arg]
        return {
            "gold": gold,
            "desk_p": 0.8 if gold == "SUPPORTS" else 0.3,
            **{v: _reading(0.3, 0.3) for v in VARIANTS},
            "tagged": _reading(s, r),
        }

    rows = [row("SUPPORTS", 0.6, 0.2), row("REFUTES", 0.2, 0.5), row("NOT ENOUGH INFO", 0.1, 0.1)]
    text = analyse(rows)
    assert "| `tagged` | 1.000 | 2 of 2 | 0.350 |" in text
    assert "| `shipped` | 0.500 | 0 of 2 | 0.000 |" in text, "a flat reading: no gap, chance AUC, and a tie counts as no side"
    assert "| desk's calibrated p(supported) | 1.000 | 2 of 2 |" in text
