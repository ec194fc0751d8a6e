"""The sign-in load bench starts the app, times health checks quiet and under sign-ins, and writes every figure."""

import json
import sys
from pathlib import Path

import pytest

from bench.sign_in_load import main, summary


def test_the_summary_gives_median_p95_and_max() -> None:
    assert summary([5.0, 1.0, 3.0]) == {"median_ms": 3.0, "p95_ms": 5.0, "max_ms": 5.0}


def test_the_bench_runs_the_app_and_writes_every_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "load.json"
    argv = ["sign_in_load", "--requests", "4", "--signers", "1", "--cost", "4", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    main()
    figures = json.loads(out.read_text())
    assert figures["sign_ins"] > 0 and figures["cost"] == 4
    for phase in ("quiet", "busy"):
        assert set(figures[phase]) == {"median_ms", "p95_ms", "max_ms"} and figures[phase]["max_ms"] > 0
