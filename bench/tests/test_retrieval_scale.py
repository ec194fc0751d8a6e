"""Smoke test of the retrieval-at-scale benchmark on a tiny synthetic corpus: it completes and reports every column.

The figures are the benchmark's business (see docs/measurements/), not a test's.
"""

from pathlib import Path

import pytest

from bench import retrieval


def test_the_scale_benchmark_ingests_searches_and_reports_every_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    retrieval.main(["--sizes", "120", "--queries", "6", "--vectors", "hashed", "--data-dir", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.strip().startswith("120 "))
    cells = row.split()
    assert cells[:3] == ["120", "this", "tree"]
    numbers = [float(c) for c in cells[3:]]
    assert len(numbers) == 8 and all(n >= 0 for n in numbers)  # ingest s, passages/s, search, index side and embedding p50/p95
    assert numbers[1] > 0, "passages per second"
    assert lines[-1].startswith("load average (1, 5, 15 min): start ")
