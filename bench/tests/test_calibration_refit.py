"""bench/calibration_refit.py reads stored desk records as the calibration flow's readings and fits them as `calibrate` does."""

import gzip
import json
from pathlib import Path

import pytest

from bench.calibration_refit import fit_and_score, readings_of
from pipelines.calibration.files import load_shipped
from pipelines.core.config import RunConfig


def record(i: int, supported: bool) -> dict:  # type: ignore[type-arg]
    """A claim read with the contrast question on 3 exhibits: the first leans the claim's way, as a model that reads it would."""
    lean = 0.3 if supported else -0.3
    first = {"SUPPORTS": 0.4 + lean / 2 + 0.01 * (i % 3), "REFUTES": 0.4 - lean / 2, "UNRELATED": 0.2 - 0.01 * (i % 3)}
    other = {"SUPPORTS": 0.1, "REFUTES": 0.1, "UNRELATED": 0.8}
    exhibits = [{"id": f"E{k}", "round": 1, "per_order": [first if k == 1 else other] * 2} for k in range(1, 4)]
    return {"id": f"c{i}", "claim": f"claim {i}", "gold": "SUPPORTS" if supported else "REFUTES", "exhibits": exhibits}


def test_stored_records_are_fitted_as_the_calibrate_command_fits_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "records.jsonl.gz"
    rows = [record(i, i % 2 == 0) for i in range(30)] + [{**record(99, True), "gold": "NOT ENOUGH INFO"}]
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    readings = readings_of(path, "contrast", exhibits=2)
    assert len(readings) == 30, "NOT ENOUGH INFO claims are left out"
    assert all(len(r.stances) == 2 for r in readings)
    written = tmp_path / "fitted.json"
    config = RunConfig().model_copy(update={"desk": RunConfig().desk.model_copy(update={"reader": "contrast"})})
    fit_and_score(readings[:20], readings[20:], config, load_shipped("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "contrast"), written)
    out = capsys.readouterr().out
    assert "fitted on 20 claims" in out and "| fitted here | 1.000 |" in out
    assert json.loads(written.read_text())["weights"]["top"] > 0


def test_the_curve_scores_what_a_desk_with_n_labelled_claims_would_keep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.calibration_refit import as_ruled, print_curve

    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record(i, i % 2 == 0)) + "\n" for i in range(60)))
    readings = readings_of(path, "contrast")
    config = RunConfig().model_copy(update={"desk": RunConfig().desk.model_copy(update={"reader": "contrast"})})
    shipped = load_shipped("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "contrast")
    print_curve(readings[:40], readings[40:], config, shipped, [20, 50], draws=3)
    out = capsys.readouterr().out
    rows = {
        tuple(c.strip() for c in line.split("|")[1:3]): [c.strip() for c in line.split("|")[3:-1]]
        for line in out.splitlines()
        if line.startswith("| ")
    }
    assert rows[("20", "refit")][0].startswith("1.000"), (
        "the refit on 20 claims of a beat whose first exhibit leans its way reads all of it"
    )
    assert rows[("20", "kept")][-2:] == ["1.00", "0.00"], "and is kept over the shipped calibration, which does not know the beat"
    assert "only 40 train claims" in out, "50 cannot be drawn from 40"
    assert float(rows[("0", "shipped")][1]) == pytest.approx(as_ruled(readings[40:], shipped)), "the shipped row is the shipped one's"
