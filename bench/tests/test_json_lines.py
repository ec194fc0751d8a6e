"""The benches' one reader of JSON-lines files: plain or gzipped, a killed run's broken lines left out and counted."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from bench.desk_rescore import read_records as desk_records
from bench.json_lines import read_json_lines
from bench.protocols import read_records as protocol_records
from bench.reading_cut import read_records as cut_records

# A run killed while writing claim 2, then resumed: the resumed record is appended to the cut line, and claim 3 follows.
WRITTEN = '{"id": "c1", "protocol": "desk"}\n\n{"id": "c2", "prot{"id": "c2", "protocol": "toolmad"}\n{"id": "c3"}\n[1, 2]\n'


@pytest.mark.parametrize("gzipped", [False, True])
def test_plain_and_gzipped_read_alike(tmp_path: Path, gzipped: bool, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / ("r.jsonl.gz" if gzipped else "r.jsonl")
    path.write_bytes(gzip.compress(WRITTEN.encode()) if gzipped else WRITTEN.encode())
    assert [r["id"] for r in read_json_lines(path)] == ["c1", "c3"]
    assert f"{path}: 2 line(s) left out" in capsys.readouterr().err  # the broken line and the array, never silently


def test_a_file_not_written_yet(tmp_path: Path) -> None:
    missing = tmp_path / "none.jsonl"
    assert read_json_lines(missing, missing_ok=True) == []
    assert protocol_records(missing) == []  # the protocols bench resumes from a file it has not written yet
    with pytest.raises(FileNotFoundError):
        read_json_lines(missing)


def test_every_bench_reads_a_gzipped_file_with_a_broken_line(tmp_path: Path) -> None:
    # Before the one reader: the protocols bench could not read gzip, the desk ones failed on a killed run's line.
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(gzip.compress(WRITTEN.encode()))
    assert [r["id"] for r in protocol_records(path)] == ["c1", "c3"]
    assert [r["id"] for r in cut_records(path)] == ["c1", "c3"]
    assert [r["id"] for r in desk_records(path)] == ["c1", "c3"]  # c3 names no protocol: desk's, as the oldest records
