"""bench/faithfulness_reader.py on the fake backend: a stored toolmad run's answers scored by every reader, then compared."""

import argparse
import asyncio
from pathlib import Path

from bench.faithfulness_reader import READERS, analyse, answers, collect
from bench.protocols import read_records
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import protocol_config


def test_each_stored_answer_is_scored_by_every_reader_against_the_evidence_it_argued_from(services: Services, tmp_path: Path) -> None:
    events = list(stream_run("Masks reduce transmission of respiratory viruses", protocol_config("toolmad", early_stop=False), services))
    assert services.store is not None
    found = answers(events, per_run=3)
    assert [turn.id for _, turn, _ in found] == ["RAG-r1", "Search-r1", "RAG-r2"]
    for _, turn, evidence in found:
        assert set(turn.cited) <= {e.id for e in evidence}, "every item an answer cites is in what it is checked against"

    records = tmp_path / "f.jsonl"
    store_file = Path(services.settings.data_dir) / "runs.sqlite"
    args = argparse.Namespace(store=str(store_file), records=str(records), limit=2, per_run=3, backend="fake", readers=list(READERS))
    asyncio.run(collect(args))
    rows = read_records(records)
    assert len(rows) == 2 and all(0 <= row[r]["f"] <= 1 for row in rows for r in READERS)
    assert all(row["read"]["tokens_out"] == len(row["read"]["statements"]) for row in rows), "read: one token a statement"
    assert all(row["sentences"]["calls"] == 1 for row in rows), "sentences: one call of verdicts, no call to write statements"
    assert all([s for s, _ in row["sentences"]["statements"]] == [s for s, _ in row["read"]["statements"]] for row in rows), (
        "sentences and read check the same statements: the answer's sentences"
    )
    assert [row["order"] for row in rows] == [list(READERS), [*READERS[1:], READERS[0]]], "each reader goes first in turn"
    asyncio.run(collect(args))
    assert len(read_records(records)) == 2, "a second run resumes: nothing is scored twice"
    text = analyse(rows)
    assert text.startswith("2 answers") and "| `read` |" in text and "| `sentences` |" in text
    assert text.count(" (1) |") == 2 and text.count("| n/a |") == 1, "the seconds of the readers that went first, one answer each"
    assert "F generated - F read|" in text and "F generated - F sentences|" in text and "agree on passing 0.7 for" in text


def test_the_probe_reads_each_sentence_both_ways_and_says_whether_the_letters_follow_the_items(services: Services, tmp_path: Path) -> None:
    from bench.faithfulness_reader import analyse_probe, probe

    list(stream_run("Masks reduce transmission of respiratory viruses", protocol_config("toolmad", early_stop=False), services))
    records = tmp_path / "s.jsonl"
    store_file = Path(services.settings.data_dir) / "runs.sqlite"
    asyncio.run(probe(argparse.Namespace(store=str(store_file), records=str(records), limit=1, per_run=1, backend="fake")))
    rows = read_records(records)
    assert rows and len({r["turn"] for r in rows}) == 1
    for row in rows:
        assert set(row["none_last"]) == {*(f"[{i}]" for i in row["evidence_ids"]), "none of them"} == set(row["none_first"])
        assert next(iter(row["none_first"])) == "none of them" and list(row["none_last"])[-1] == "none of them"
        assert len(row["yes_both_orders"]) == 2
    assert analyse_probe(rows).startswith(f"{len(rows)} sentences of 1 answers")
