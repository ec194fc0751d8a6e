"""bench/reading_failures.py takes desk's verdict apart stage by stage from stored records."""

import json
from pathlib import Path

from bench.reading_failures import analyse, log_odds


def exhibit(doc: str, s: float, r: float) -> dict:  # type: ignore[type-arg]
    return {"id": "E", "doc_id": doc, "probabilities": {"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 4)}}


def test_each_stage_is_read_from_the_records(tmp_path: Path) -> None:
    rows = []
    for i in range(8):
        supported = i % 2 == 0
        deciding = exhibit(f"d{i}", 0.6, 0.2) if supported else exhibit(f"d{i}", 0.2, 0.6)
        others = [exhibit("x", 0.3, 0.3)] * 2
        exhibits = [*others, deciding] if i < 6 else others  # the last two claims' deciding document was not found
        rows.append(
            {
                "protocol": "desk",
                "id": f"c{i}",
                "gold": "SUPPORTS" if supported else "REFUTES",
                "p_supported": 0.5,
                "predicted": "NOT ENOUGH INFO",
                "exhibits": exhibits,
            }
        )
    rows.append({**rows[0], "id": "c-nei", "gold": "NOT ENOUGH INFO"})
    found = analyse(rows, {f"c{i}": {f"d{i}"} for i in range(8)})
    assert found["claims"] == 8, "NOT ENOUGH INFO claims are left out"
    assert found["deciding among the exhibits"] == "6 (0.75)"
    assert found["deciding exhibit's first place (median rank)"] == "3"
    assert found["AUC, the deciding exhibit alone (where found)"] == "1.000", "the deciding exhibit reads each claim its way"
    assert found["AUC, aggregated p(supported)"] == "0.500", "while the verdict's p does not"
    assert found["NOT ENOUGH INFO verdicts"] == "8 (1.00)" and found["right as ruled"] == "0.000"
    assert found["lean: deciding exhibit, SUPPORTS claims"] == f"{log_odds(exhibit('d', 0.6, 0.2)['probabilities']):+.3f} (3)"
    assert json.dumps(found)
