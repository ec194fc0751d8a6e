"""The dev-set builders of bench/data on a few made-up rows: FM2's gold sentences are found where the corpus loader cuts
them, its split keeps each page on one side, and LIAR-PLUS's inserted empty ruling cells are taken out of the pairing."""

from __future__ import annotations

from typing import Any

from bench.data.fix_liar_dev import agreement, build, pair
from bench.data.make_fm2 import build as build_fm2
from bench.data.make_fm2 import train_pages
from corpora.base import split_sentences


def _fm2_row(n: int, page: str, label: str, gold: list[tuple[str, str]], retrieved: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "id": f"r{n}",
        "text": f"claim {n} about {page}",
        "label": label,
        "wikipedia_page": page,
        "category": "History",
        "gold_evidence": [{"section_header": h, "text": t} for h, t in gold],
        "retrieved_evidence": [{"section_header": h, "text": t} for h, t in retrieved],
    }


def test_fm2_gold_indices_point_at_the_gold_sentences_as_the_loader_splits_the_document() -> None:
    two_sentences = "The U.S. team won in 1990. It was their first title."  # one FM2 sentence the splitter cuts in two
    rows = [
        _fm2_row(
            0,
            "Cup",
            "SUPPORTS",
            [("History", "The final was in Rome.")],
            [("History", two_sentences), ("History", "The final was in Rome.")],
        ),
        _fm2_row(
            1,
            "Cup",
            "REFUTES",
            [("History", two_sentences)],
            [("History", "Tickets sold out"), ("Summary", "The Cup is a football trophy.")],
        ),
        _fm2_row(2, "Cup", "NOT ENOUGH INFO", [("History", "Nothing here.")], []),
    ]
    built = build_fm2(rows)
    claims = {c["id"]: c for c in built.train + built.dev}
    assert set(claims) == {"fm2-r0", "fm2-r1"} and sum(built.left_out.values()) == 1
    docs = {d["id"]: split_sentences(d["text"]) for d in built.corpus}
    for claim_id, wanted in (
        ("fm2-r0", ["The final was in Rome."]),
        ("fm2-r1", ["The U.S. team won in 1990.", "It was their first title."]),
    ):
        (evidence,) = claims[claim_id]["evidence"]
        assert [docs[evidence["doc_id"]][i] for i in evidence["sentences"]] == wanted
    assert len(built.corpus) == 2, "one document per (page, section)"


def test_fm2_split_keeps_each_page_on_one_side_and_is_the_same_every_time() -> None:
    rows = [_fm2_row(n, f"Page {n % 7}", "SUPPORTS", [("Summary", f"Fact {n}.")], []) for n in range(40)]
    built = build_fm2(rows)
    train_pages_seen = {c["wikipedia_page"] for c in built.train}
    dev_pages_seen = {c["wikipedia_page"] for c in built.dev}
    assert train_pages_seen and dev_pages_seen and not train_pages_seen & dev_pages_seen
    assert 15 <= len(built.train) <= 25
    assert train_pages(rows) == train_pages(rows) == train_pages_seen


def _liar_row(n: int, claim: str, ruling: str | None, label: str = "true") -> dict[str, Any]:
    return {"json_file_id": f"{n}.json", "label": label, "claim": claim, "topics": [], "originator": "a-speaker", "justification": ruling}


def test_liar_null_ruling_cells_are_dropped_and_the_rulings_paired_in_order() -> None:
    rows = [
        _liar_row(1, "Taxes on bread rose sharply in Ohio", "Ohio bread taxes rose, the records show."),
        _liar_row(2, "Wolves returned to Yellowstone park", "\n"),  # a real blank: the authors found no ruling sentence
        _liar_row(3, "The mayor cut library hours downtown", None),  # inserted: every later ruling sits one row low
        _liar_row(4, "Rail ridership doubled since 2010 nationwide", "The mayor did cut downtown library hours."),
        _liar_row(5, "Coal plants closed across Kentucky counties", "Rail ridership has doubled since 2010, nationwide."),
    ]
    paired = pair(rows)
    assert paired.inserted == [2]
    assert paired.repaired[1] == "\n", "a blank ruling keeps its place"
    assert paired.repaired[2] == "The mayor did cut downtown library hours."
    assert paired.repaired[3] == "Rail ridership has doubled since 2010, nationwide."
    assert paired.repaired[4] is None, "the last statement's ruling is not in the file"
    assert agreement(rows, paired.as_filed) == (1, 3) and agreement(rows, paired.repaired) == (3, 3)
    claims, corpus = build("dev", paired)
    assert [c["id"] for c in claims] == ["c-dev-1", "c-dev-3", "c-dev-4"]
    assert {d["id"]: d["text"] for d in corpus}["liar-dev-3"] == "The mayor did cut downtown library hours."
