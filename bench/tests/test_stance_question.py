"""bench/stance_question.py reads each claim's deciding exhibit with every variant of the stance question."""

import json
import sys
from pathlib import Path

import pytest

from bench import stance_question


def test_every_variant_reads_the_deciding_exhibit_on_the_fake_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = tmp_path / "claims.jsonl"
    records = tmp_path / "records.jsonl"
    items, rows = [], []
    for i in range(4):
        label = "SUPPORTS" if i % 2 == 0 else "REFUTES"
        items.append(
            {"id": f"c{i}", "claim": f"Claim number {i} is so.", "label": label, "evidence": [{"doc_id": f"d{i}", "sentences": [0]}]}
        )
        exhibits = [
            {"id": "E1", "doc_id": "other", "text": "Unrelated text.", "probabilities": {}},
            {"id": "E2", "doc_id": f"d{i}", "text": f"The ruling on claim {i}.", "title": "A ruling", "probabilities": {}},
        ]
        rows.append({"protocol": "desk", "id": f"c{i}", "claim": f"Claim number {i} is so.", "gold": label, "exhibits": exhibits})
    rows.append({**rows[0], "id": "c9", "exhibits": rows[0]["exhibits"][:1]})  # no deciding exhibit: left out
    claims.write_text("".join(json.dumps(r) + "\n" for r in items))
    records.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "readings.jsonl"
    argv = [
        "stance_question.py",
        str(records),
        "--dataset",
        str(claims),
        "--backend",
        "fake",
        "--data-dir",
        str(tmp_path / "data"),
        "--out",
        str(out),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    stance_question.main()
    read = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in read] == ["c0", "c1", "c2", "c3"]
    for row in read:
        for variant in ("contrast", "verdict", "true_false"):
            assert sum(row[variant].values()) == pytest.approx(1.0, abs=0.01)
            assert row["calls"][variant] == 2 and row["fresh_tokens"][variant] > 0
    table = capsys.readouterr().out
    assert "4 claims (2 SUPPORTS)" in table and "| true_false |" in table


def test_an_unknown_variant_is_refused_plainly(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["stance_question.py", "r.jsonl", "--dataset", "d.jsonl", "--variants", "contrast,oracle"])
    with pytest.raises(SystemExit):
        stance_question.main()
    assert "unknown variants: oracle" in capsys.readouterr().err


def test_with_a_corpus_each_claim_reads_its_deciding_document_s_closest_passage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims, corpus = tmp_path / "claims.jsonl", tmp_path / "corpus.jsonl"
    items, docs = [], []
    for i in range(4):
        label = "SUPPORTS" if i % 2 == 0 else "REFUTES"
        items.append(
            {
                "id": f"c{i}",
                "claim": f"Bees in hive {i} count to four.",
                "label": label,
                "evidence": [{"doc_id": f"d{i}", "sentences": [0]}],
            }
        )
        filler = " ".join(f"Sentence {k} is about the weather in town {k}." for k in range(12))
        docs.append({"id": f"d{i}", "title": "A ruling", "text": f"{filler} Bees in hive {i} count to four, the study found."})
    items.append(
        {"id": "c9", "claim": "No document for this one.", "label": "SUPPORTS", "evidence": [{"doc_id": "gone", "sentences": [0]}]}
    )
    claims.write_text("".join(json.dumps(r) + "\n" for r in items))
    corpus.write_text("".join(json.dumps(r) + "\n" for r in docs))
    out = tmp_path / "readings.jsonl"
    argv = ["stance_question.py", "--dataset", str(claims), "--corpus", str(corpus), "--backend", "fake", "--variants", "verdict"]
    monkeypatch.setattr(sys, "argv", [*argv, "--data-dir", str(tmp_path / "data"), "--out", str(out), "--limit", "10"])
    exhibits: list[str] = []
    read_variant = stance_question.read_variant

    async def recorded(llm, variant, claim, exhibit):  # type: ignore[no-untyped-def]
        exhibits.append(exhibit.text)
        return await read_variant(llm, variant, claim, exhibit)

    monkeypatch.setattr(stance_question, "read_variant", recorded)
    stance_question.main()
    read = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in read) == ["c0", "c1", "c2", "c3"]  # c9's document is not in the corpus
    assert all(r["doc_id"] == "d" + r["id"][1:] for r in read)
    assert len(exhibits) == 4 and all("count to four" in text for text in exhibits)  # the closest passage, not the weather
    assert "4 claims (2 SUPPORTS)" in capsys.readouterr().out


def test_records_and_a_corpus_together_are_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["stance_question.py", "r.jsonl", "--dataset", "d.jsonl", "--corpus", "c.jsonl"])
    with pytest.raises(SystemExit):
        stance_question.main()
    assert "not both" in capsys.readouterr().err


def test_the_table_of_saved_readings_compares_each_variant_with_the_first_on_the_same_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = []
    for i in range(40):
        gold = "SUPPORTS" if i % 2 == 0 else "REFUTES"
        sign = 1 if gold == "SUPPORTS" else -1
        good = {"SUPPORTS": 0.5 + 0.2 * sign, "REFUTES": 0.5 - 0.2 * sign - 0.1, "UNRELATED": 0.1}  # separates every claim
        coin = {"SUPPORTS": 0.45 if i % 4 < 2 else 0.3, "REFUTES": 0.3 if i % 4 < 2 else 0.45, "UNRELATED": 0.25}  # separates none
        rows.append(
            {
                "id": f"c{i}",
                "gold": gold,
                "coin": coin,
                "good": good,
                "calls": {"coin": 2, "good": 2},
                "fresh_tokens": {"coin": 9, "good": 9},
            }
        )
    readings = tmp_path / "readings.jsonl"
    readings.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(sys, "argv", ["stance_question.py", "--readings", str(readings), "--variants", "coin,good"])
    monkeypatch.setattr(
        stance_question, "ASKED", {"coin": stance_question.true_false_messages, "good": stance_question.true_false_messages}
    )
    stance_question.main()
    out = capsys.readouterr().out
    coin_row = next(line for line in out.splitlines() if line.startswith("| coin |"))
    good_row = next(line for line in out.splitlines() if line.startswith("| good |"))
    assert coin_row.startswith("| coin | 0.500 |  |") and good_row.startswith("| good | 1.000 | +0.500 (+")
    low = float(good_row.split("(")[1].split(" to ")[0])
    assert 0.2 < low < 0.5, "the interval's low end is above zero: a difference outside chance"


def test_the_words_variant_lists_the_words_in_each_order_and_maps_them_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.core.domain import Evidence
    from pipelines.stages.label_probability import LabelDistribution

    asked: list[tuple[str, tuple[str, ...]]] = []

    async def estimate(llm: object, messages: list, options: list[str], **_: object) -> LabelDistribution:
        asked.append((messages[-1].content, tuple(options)))
        # The passage contradicts (0.6 against 0.4), and the model pulls 0.2 towards the first word listed.
        base = {"supports": 0.4, "contradicts": 0.6, "unrelated": 0.0}
        pulled = {word: p + (0.2 if word == options[0] else 0.0) for word, p in base.items()}
        return LabelDistribution({w: p / 1.2 for w, p in pulled.items()}, "logprobs")

    monkeypatch.setattr(stance_question, "estimate_label_probabilities", estimate)
    exhibit = Evidence(id="E1", source="corpus", text="Sugar did not change behaviour.", title="Trial")
    import asyncio

    read = asyncio.run(stance_question.read_variant(None, "words", "Sugar makes children hyperactive", exhibit))  # type: ignore[arg-type]
    assert [options for _, options in asked] == [("supports", "contradicts", "unrelated"), ("contradicts", "supports", "unrelated")]
    assert (
        asked[0][0].endswith("One word: supports, contradicts or unrelated.")
        and "Statement: Sugar makes children hyperactive" in asked[0][0]
    )
    assert asked[1][0].endswith("One word: contradicts, supports or unrelated.")
    # Each word was listed first once, so each got the pull once: the stances keep the passage's 0.6 against 0.4 order.
    assert read["UNRELATED"] == 0.0 and read["REFUTES"] == pytest.approx(0.7 / 1.2) and read["SUPPORTS"] == pytest.approx(0.5 / 1.2)
