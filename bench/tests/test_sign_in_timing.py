"""The sign-in timing bench times every kind of attempt in full (none cut short by the lockout) and writes its figures."""

import json
import sys
from pathlib import Path

import pytest

from bench.sign_in_timing import main, medians_ms


def test_attempts_take_turns_and_each_gets_its_median() -> None:
    order: list[str] = []
    medians = medians_ms({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, tries=3)
    assert order == ["a", "b"] * 3 and set(medians) == {"a", "b"}


def test_the_bench_writes_every_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "timing.json"
    monkeypatch.setattr(sys, "argv", ["sign_in_timing", "--tries", "6", "--cost", "4", "--out", str(out)])
    main()  # six failures in a row for one name would be locked out after three if the bench did not clear the count
    figures = json.loads(out.read_text())
    assert figures["cost"] == 4 and figures["tries"] == 6
    for key in ("unknown_name_ms", "known_name_wrong_password_ms", "known_name_right_password_ms", "old_cost_4_stand_in_ms"):
        assert figures[key] > 0
