"""bench/word_reader.py: desk's exhibits read again as words, the claim scores fixed beforehand, resumable, no model here."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest

import bench.word_reader as word_reader
from bench.word_reader import scores, table, weighed


def _exhibit(i: int, text: str, contrast: tuple[float, float, float]) -> dict[str, object]:
    s, r, u = contrast
    return {"id": f"E{i}", "doc_id": f"d{i}", "text": text, "probabilities": {"SUPPORTS": s, "REFUTES": r, "UNRELATED": u}}


def _records(path: Path) -> None:
    rows = [
        {
            "protocol": "desk",
            "id": "c1",
            "claim": "Masks reduce transmission of respiratory viruses",
            "gold": "SUPPORTS",
            "p_supported": 0.8,
            "tokens_read": 900,
            "exhibits": [
                _exhibit(1, "Masks cut the spread of respiratory viruses in trials.", (0.5, 0.2, 0.3)),
                _exhibit(2, "The Apollo astronauts left reflectors on the Moon.", (0.3, 0.3, 0.4)),
            ],
        },
        {
            "protocol": "desk",
            "id": "c2",
            "claim": "Masks increase transmission of respiratory viruses",
            "gold": "REFUTES",
            "p_supported": 0.3,
            "tokens_read": 1000,
            "exhibits": [_exhibit(1, "Masks cut the spread of respiratory viruses in trials.", (0.3, 0.4, 0.3))],
        },
        {"protocol": "desk", "id": "c3", "claim": "x", "gold": "NOT ENOUGH INFO", "p_supported": 0.5, "tokens_read": 1, "exhibits": []},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_weighed_falls_back_to_the_plain_mean() -> None:
    assert weighed([1.0, -1.0], [3.0, 1.0]) == 0.5
    assert weighed([1.0, 0.0], [0.0, 0.0]) == 0.5  # no exhibit like enough: each counts alike


def test_reads_each_sided_claims_exhibits_once_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records, out = tmp_path / "records.jsonl", tmp_path / "words.jsonl"
    _records(records)
    asked: list[tuple[str, str]] = []

    async def read(llm: object, variant: str, claim: str, exhibit: object) -> dict[str, float]:
        asked.append((claim, exhibit.text))  # type: ignore[attr-defined]
        supports = 0.9 if "reduce" in claim else 0.2
        return {"SUPPORTS": supports, "REFUTES": 1 - supports, "UNRELATED": 0.0}

    async def relevance(llm: object, claim: str, exhibit: object) -> float:
        return 0.9 if "Masks" in exhibit.text else 0.1  # type: ignore[attr-defined]

    monkeypatch.setattr(word_reader, "read_variant", read)
    monkeypatch.setattr(word_reader, "read_relevance", relevance)
    args = argparse.Namespace(
        records=[records], corpus=str(tmp_path / "corpus.jsonl"), backend="fake", limit=0, data_dir=str(tmp_path), out=out, relevance=True
    )
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "d1", "title": "Mask trials", "text": "Masks cut the spread."}) + "\n")
    rows = asyncio.run(word_reader.collect(args))
    assert [r["id"] for r in rows] == ["c1", "c2"] and len(asked) == 3  # the NOT ENOUGH INFO claim is not read
    first = rows[0]["exhibits"]
    assert first[0]["likeness"] > 0.5 > first[1]["likeness"]  # the mask passage is like the claim, the Moon one is not
    assert rows[0]["tokens_read"]["contrast"] == 900
    # The Moon passage weighs nothing by likeness, everything in the plain mean.
    s = scores(rows[0])
    assert s["words by likeness"] == pytest.approx(0.8) and s["words mean"] == pytest.approx(0.8)
    assert s["contrast mean"] == pytest.approx((0.7 * 0.3 + 0.6 * 0.0) / 1.3)
    assert s["words by relevance"] == pytest.approx(0.8) and [e["relevance"] for e in first] == [0.9, 0.1]
    asked.clear()
    assert [r["id"] for r in asyncio.run(word_reader.collect(args))] == ["c1", "c2"] and asked == []  # read once, kept
    text = table(rows)
    assert "| words by likeness | 1.000 |" in text and "| desk | 1.000 |" in text
