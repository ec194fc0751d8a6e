"""bench/desk_paired.py: two desk runs of the same claims compared from their records, the difference paired."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import desk_paired


def record(i: int, gold: str, p: float, **more: object) -> dict[str, object]:
    predicted = "SUPPORTS" if p >= 0.7 else "REFUTES" if p <= 0.3 else "NOT ENOUGH INFO"
    return {
        "id": f"c{i}",
        "claim": f"claim {i}",
        "gold": gold,
        "predicted": predicted,
        "p_supported": p,
        "deciding_found": True,
        "calls": 21,
        "cached_calls": 0,
        "tokens": 3000,
        "tokens_read": 2000,
        **more,
    }


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_reader_that_tells_the_sides_apart_beats_a_coin_outside_chance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    golds = ["SUPPORTS", "REFUTES"] * 20
    coin = [record(i, g, 0.6 if i % 4 < 2 else 0.4) for i, g in enumerate(golds)]  # right on half of each label
    good = [record(i, g, 0.8 if g == "SUPPORTS" else 0.2, tokens_read=1500) for i, g in enumerate(golds)]
    good.append(record(99, "SUPPORTS", 0.9))  # read by one run only: left out
    first, second = write(tmp_path / "a.jsonl", coin), write(tmp_path / "b.jsonl", good)
    monkeypatch.setattr(sys, "argv", ["desk_paired.py", str(first), str(second), "--names", "contrast,verdict", "--resamples", "500"])
    desk_paired.main()
    out = capsys.readouterr().out
    assert out.startswith("40 SUPPORTS/REFUTES claims read by both (20 SUPPORTS)")
    assert "| contrast | 0.500 | 0.000 | 0.500 |" in out and "| verdict | 1.000 | 1.000 | 1.000 |" in out
    assert "| 21 / 1,500 |" in out
    auc = out.split("AUC ")[-1]
    assert auc.startswith("+0.500 (+") and float(auc.split("(")[1].split(" to ")[0]) > 0.2, "the interval lies above zero"


def test_runs_with_no_claims_in_common_are_refused_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(tmp_path / "a.jsonl", [record(1, "SUPPORTS", 0.8)])
    second = write(tmp_path / "b.jsonl", [record(2, "SUPPORTS", 0.8)])
    monkeypatch.setattr(sys, "argv", ["desk_paired.py", str(first), str(second)])
    with pytest.raises(SystemExit):
        desk_paired.main()
    assert "nothing to compare" in capsys.readouterr().err
