"""desk's stopping rule on stored readings: how many exhibits it reads, and that no verdict changes, side by side with reading all.

    .venv/bin/python bench/reading_cut.py [--records docs/measurements/data/deep-exhibits-2026-11-24/dev25r.jsonl.gz]
        [--reader contrast] [--model qwen2.5-coder-1.5b-instruct-q4_k_m]

No model calls: each exhibit's stance is read once, on its own, so a records file of
``bench/desk.py --records`` (every exhibit of a claim read) holds what desk would read with the
stopping rule on, up to where it stops. For each SUPPORT/REFUTE claim the exhibits are taken in
retrieval order and reading stops at the first exhibit after which ``verdict_bounds`` calls the
verdict settled (as ``desk.stop_early`` does; the records hold no pasted evidence, and a run whose
read exhibits conflict is read to the end here too). Printed side by side, reading all and
stopping: exhibits read (median, mean), verdicts as ruled that differ (must be 0), binary accuracy,
ECE and AUC of p(supported), and the share of exhibits read, which is the share of the stance
readings' tokens (every exhibit's two readings cost about the same).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.json_lines import read_json_lines
from pipelines.calibration.files import Calibration, load_shipped
from pipelines.eval import metrics
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.stages.stance import Stance
from pipelines.stages.stance_aggregation import Bounds, aggregate, settled_bounds

DEFAULT_RECORDS = Path(__file__).resolve().parents[1] / "docs/measurements/data/deep-exhibits-2026-11-24/dev25r.jsonl.gz"


def stances_of(record: dict[str, Any]) -> list[Stance]:
    return [
        Stance(exhibit_id=e["id"], probabilities=e["probabilities"], per_order=tuple(e["per_order"]), method="logprobs")
        for e in record["exhibits"]
        if e.get("round", 1) == 1
    ]


def stop_at(stances: Sequence[Stance], calibration: Calibration) -> tuple[int, Bounds | None]:
    """How many exhibits desk reads before the verdict is settled (all of them when it never is), by desk's own rule, and the
    bound it stopped on (None: it read them all)."""
    cfg = DeskConfig()
    rule = {"strong_at": cfg.strong_at, "decide_at": cfg.decide_at, "debate": cfg.debate}
    for read in range(1, len(stances)):
        bounds = settled_bounds(stances[:read], len(stances) - read, calibration, **rule)
        if bounds is not None:
            return read, bounds
    return len(stances), None


def compare(records: Sequence[dict[str, Any]], calibration: Calibration) -> dict[str, dict[str, float]]:
    sided = [r for r in records if r["gold"] in ("SUPPORTS", "REFUTES") and r.get("exhibits")]
    columns: dict[str, dict[str, float]] = {}
    rows: dict[str, list[tuple[int, Any]]] = {"read all": [], "stop when settled": []}
    for record in sided:
        stances = stances_of(record)
        rows["read all"].append((len(stances), aggregate(stances, calibration)))
        k, _ = stop_at(stances, calibration)
        rows["stop when settled"].append((k, aggregate(stances[:k], calibration)))
    gold = [r["gold"] for r in sided]
    full_labels = [a.label for _, a in rows["read all"]]
    for name, results in rows.items():
        q = [a.calibrated for _, a in results]
        correct = [("SUPPORTS" if p >= 0.5 else "REFUTES") == g for p, g in zip(q, gold, strict=True)]
        read = [k for k, _ in results]
        columns[name] = {
            "claims": len(results),
            "exhibits read (median)": statistics.median(read),
            "exhibits read (mean)": statistics.mean(read),
            "share of exhibits read": sum(read) / sum(k for k, _ in rows["read all"]),
            "verdicts that differ from reading all": sum(a.label != f for (_, a), f in zip(results, full_labels, strict=True)),
            "binary accuracy": sum(correct) / len(correct),
            "ECE (binary, 10 bins)": metrics.expected_calibration_error([max(p, 1 - p) for p in q], correct, 10) or 0.0,
            "AUC": metrics.auc(q, [g == "SUPPORTS" for g in gold]),
        }
    return columns


def shipped_calibration(model: str, reader: str) -> Calibration:
    calibration = load_shipped(model, reader)
    if calibration is None:
        raise SystemExit(f"no shipped calibration for {model} ({reader})")
    return calibration


def read_records(path: Path) -> list[dict[str, Any]]:
    """A records file of ``bench/desk.py --records`` (JSON lines, gzip allowed)."""
    return read_json_lines(path)


def print_table(columns: dict[str, dict[str, Any]]) -> None:
    """A figure a row, a column a group (floats to 3 places, None as '-')."""
    names = list(columns)
    print("| figure | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for key in columns[names[0]]:
        cells = ["-" if (v := columns[n][key]) is None else f"{v:.3f}" if isinstance(v, float) else str(v) for n in names]
        print(f"| {key} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--reader", default="contrast")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    args = parser.parse_args()
    calibration = shipped_calibration(args.model, args.reader)
    print(f"{args.records.name}, calibration {calibration.name}\n")
    print_table(compare(read_records(args.records), calibration))


if __name__ == "__main__":
    main()
