"""bench/admissibility_readings.py: its table from stored readings, and a whole run on the fake backend."""

import argparse
import asyncio
import gzip
import json
import shutil
from pathlib import Path

import pytest

from bench.admissibility_readings import CREDIBILITY, RELEVANCE, read_options, run, stored_desk, table
from pipelines.eval.datasets import load_dataset
from pipelines.run.llm import fake
from pipelines.run.llm.client import LLM
from tests.fakes import RecordingChat


def _row(claim: str, rank: int, deciding: bool, rating: float | None, options: float, desk: float) -> dict[str, object]:
    return {
        "key": f"{claim}/E{rank + 1}", "claim": claim, "rank": rank, "deciding": deciding,
        "rating": None if rating is None else (rating, 1.0), "options": (options, 0.5), "desk": (desk, None),
        "rating_calls": 1, "options_calls": 4, "desk_calls": 2, "rating_computed": 300, "options_computed": 340, "desk_computed": 200,
    }  # fmt: skip


def test_the_table_tells_which_reading_puts_the_deciding_exhibit_first() -> None:
    rows = [
        _row("a", 0, False, 0.5, 0.4, 0.9), _row("a", 1, True, 0.5, 0.6, 0.2), _row("a", 2, False, None, 0.1, 0.3),
        _row("b", 0, True, 0.0, 0.7, 0.8), _row("b", 1, False, 0.0, 0.2, 0.1),
    ]  # fmt: skip
    text = table(rows)
    assert text.splitlines()[0] == "5 exhibits of 2 claims, 2 from a deciding document"
    rating, options, desk = (
        line for line in text.splitlines() if line.startswith("| rating") or line.startswith("| options") or line.startswith("| desk")
    )
    assert options.startswith("| options | 1.000 | 1.000 | 1.000 | 2 of 2 | 4.0 | 340 | 0 |")
    assert "| 1 of 2 |" in desk and "| n/a |" in desk, "desk rates claim a's deciding exhibit below both others; no credibility"
    # rating: ties rank in desk's order, so an exhibit rated like the one before it is not first; one answer failed
    assert rating.startswith("| rating | 0.500 | 0.500 | 0.500 |") and rating.endswith("| 1 |") and "| 1 of 2 |" in rating


def test_a_run_on_the_fake_reads_each_claims_deciding_exhibit_and_five_others_once(
    tmp_path: Path, checkcovid_data_dir: Path, checkcovid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(checkcovid_data_dir, data_dir)
    monkeypatch.setenv("DEBATEDESK_CHECKCOVID_DIR", str(checkcovid_dir))
    out = tmp_path / "readings.jsonl"
    args = argparse.Namespace(out=str(out), split="dev", claims=2, skip=0, backend="fake", data_dir=str(data_dir))
    asyncio.run(run(args))
    rows = [json.loads(line) for line in out.read_text().splitlines()]

    assert len({r["claim"] for r in rows}) == 2 and len({r["key"] for r in rows}) == len(rows)
    for claim in {r["claim"] for r in rows}:
        mine = [r for r in rows if r["claim"] == claim]
        assert any(r["deciding"] for r in mine) and sum(not r["deciding"] for r in mine) == 5
    assert all(r["rating_calls"] == 1 and r["options_calls"] == 4 and r["desk_calls"] >= 2 for r in rows)
    asyncio.run(run(args))
    assert len(out.read_text().splitlines()) == len(rows), "a second run reads nothing already kept"


SHOWN = {"claim": "Masks reduce transmission", "source": "local corpus demo document d1", "evidence": "[E1] Masks cut transmission."}


async def test_options_average_away_a_pull_towards_the_first_letter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that answers A whatever it stands for (0.6 A, 0.3 B, 0.1 C) rates an exhibit in the middle of the scale,
    not at the top: over the two orders the best and the middle answer each get 0.45. The exhibit opens all four prompts."""
    monkeypatch.setitem(fake.CHOICE_RESPONDERS, frozenset("ABC"), lambda view, options: {"A": 0.6, "B": 0.3, "C": 0.1})
    chat = RecordingChat()
    relevance, credibility = await read_options(LLM(chat, role="judge", model_name="fake"), SHOWN)

    assert relevance == pytest.approx(0.45 + 0.5 * 0.45, abs=0.01) and credibility == pytest.approx(relevance, abs=1e-6)
    users = [user for _, user in chat.sent]
    assert len(users) == 4 and all(user.startswith(users[0].split(RELEVANCE[0])[0]) for user in users)
    for (words, answers), (first, second) in ((RELEVANCE, users[:2]), (CREDIBILITY, users[2:])):
        assert words in first and f"A. {answers[0]}\nB. {answers[1]}" in first
        assert f"A. {answers[1]}\nB. {answers[0]}" in second, "the two answers that are not 'no' swap letters"


def test_desks_stored_readings_are_scored_against_the_deciding_documents(
    tmp_path: Path, checkcovid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBATEDESK_CHECKCOVID_DIR", str(checkcovid_dir))
    item = next(i for i in load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir).items if i.gold_evidence)

    def exhibit(doc: str, unrelated: float) -> dict[str, object]:
        return {"doc_id": doc, "probabilities": {"SUPPORTS": 0.1, "REFUTES": 0.1, "UNRELATED": unrelated}}

    records = [{"id": item.id, "exhibits": [exhibit("other-1", 0.2), exhibit(item.gold_evidence[0].doc_id, 0.5), exhibit("other-2", 0.9)]}]
    path = tmp_path / "desk.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))

    # r = 1 - 2 p(unrelated): 0.6 admitted, 0 (the deciding one) and 0 discarded
    assert stored_desk(path, "dev") == (
        "desk's stored readings: 3 exhibits of 1 claims, 1 from a deciding document; AUC 0.500 over all, 0.500 within a claim (mean of 1)\n"
        "as a grounded court rules the first 21 of each claim (3 exhibits): admitted 0.00 of the deciding and 0.50 of the others, "
        "discarded 1.00 and 0.50"
    )
