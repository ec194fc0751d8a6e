"""bench/exhibit_likeness.py: what a floor keeps, the verdicts it rules again, and the table the card reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.exhibit_likeness import floor_rows, verdicts, write_table


def _record(gold: str, likeness: dict[str, float], stances: dict[str, tuple[float, float]]) -> dict[str, Any]:
    exhibits = [
        {
            "id": eid,
            "doc_id": f"d{eid}",
            "probabilities": {"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 4)},
            "per_order": [{"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 4)}] * 2,
        }
        for eid, (s, r) in stances.items()
    ]
    return {"gold": gold, "exhibits": exhibits, "likeness": likeness, "deciding_doc": "dE1"}


def test_a_floor_keeps_what_is_alike_and_rules_from_it_alone() -> None:
    far_support = _record("REFUTES", {"E1": 0.6, "E2": 0.05}, {"E1": (0.1, 0.8), "E2": (0.9, 0.05)})
    rows = floor_rows([far_support], 0.15)
    assert rows["deciding kept"] == "1 of 1" and rows["others kept"] == 0.0 and rows["exhibits kept"] == 0.5
    assert floor_rows([far_support], 0.7)["deciding kept"] == "0 of 1"
    everything, floored = verdicts([far_support], 0.0), verdicts([far_support], 0.15)
    assert everything["claims"] == floored["claims"] == 1
    assert floored["binary accuracy"] == 1.0, "without the far passage read as support, the refuting one rules"


def test_the_table_the_card_reads_is_sorted_per_beat(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    write_table(path, {"beat": [0.5, 0.21234, 0.9]})
    table = json.loads(path.read_text(encoding="utf-8"))
    assert table["beats"] == {"beat": [0.212, 0.5, 0.9]} and "bench/exhibit_likeness.py" in table["measured"]
