"""Score stored `desk` records again under other readers and calibrations, without calling the model.

    .venv/bin/python bench/desk_rescore.py RECORDS.jsonl[.gz] [--variant NAME=READER:SHARE:CALIBRATION.json ...]

A records file of ``bench/desk.py --records`` keeps every exhibit's readings in each option
order. A run read with the contrast question alone (2 orders) is scored as ``contrast``. A
run read with the reader ``both`` holds the separate questions' readings (the first
``orders``, twice that with the claim's opposite) and the contrast question's 2 after them,
so the same run can be scored as ``separate``, ``contrast`` or ``both`` at any share, each
with a calibration file (fitted on train by ``bench/fit_desk_calibration.py``). Printed per
variant, on the SUPPORT/REFUTE claims: binary accuracy, AUC of p(supported), log loss, ECE (10
bins) beside the ECE a perfectly calibrated verdict would show on as many claims, and
selective accuracy at 50%; on all claims, 3-label accuracy and macro-F1 as ``aggregate``
would rule. Only round-1 readings are scored (a claim whose exhibits were argued over is
counted as first read).

Without ``--variant``: the shipped calibrations, ``both`` at the shipped share and
``contrast`` alone. ``CALIBRATION`` may also be ``git:REV`` (the both-file at that commit).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.json_lines import read_json_lines
from pipelines.calibration.files import Calibration, calibration_key, load_shipped
from pipelines.calibration.fitting import scores
from pipelines.eval import metrics
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.stages.stance import CONTRAST_ORDERS_MIXED, STANCES, Stance, StanceKey, mean_reading, mixed
from pipelines.stages.stance_aggregation import aggregate

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
BINARY = ("SUPPORTS", "REFUTES")


@dataclass(frozen=True)
class Variant:
    name: str
    reader: str  # separate, contrast or both
    share: float
    calibration: Calibration | None


def read_records(path: Path) -> list[dict[str, Any]]:
    """desk's records in a records file of ``bench/desk.py --records`` (JSON lines, gzip allowed)."""
    return [r for r in read_json_lines(path) if r.get("protocol", "desk") == "desk"]


def stances_as(record: dict[str, Any], reader: str, share: float, orders: int = 3) -> list[Stance]:
    """The record's round-1 exhibits as ``reader`` would have read them: from a run read with 'both', or as read by a run of the
    contrast or the verdict question (2 orders). A record that names its reader (``bench/desk.py`` writes it) is checked
    against it; an older one is told apart by its count of readings, which cannot tell a contrast run from a verdict run."""
    kept = []
    read_with = record.get("reader") or ""
    if read_with and read_with != "both" and read_with != reader:
        raise SystemExit(f"claim {record['id']}: read with the {read_with} question; it cannot be scored as {reader}")
    for exhibit in record["exhibits"]:
        if exhibit.get("round", 1) != 1:
            continue
        readings = tuple({s: float(p.get(s, 0.0)) for s in STANCES} for p in exhibit["per_order"])
        alone = read_with == reader or (not read_with and reader in ("contrast", "verdict") and len(readings) == CONTRAST_ORDERS_MIXED)
        if reader != "both" and alone:
            kept.append(_stance(exhibit["id"], readings))  # a run read with that question alone: its readings as they are
            continue
        if reader == "verdict":
            raise SystemExit(
                f"claim {record['id']}: {len(readings)} readings an exhibit; the verdict question is read from a run that asked it"
            )
        if len(readings) not in (orders + CONTRAST_ORDERS_MIXED, 2 * orders + CONTRAST_ORDERS_MIXED):
            raise SystemExit(
                f"claim {record['id']}: {len(readings)} readings an exhibit; rescoring needs a run read with 'both' in {orders} orders"
            )
        split = len(readings) - CONTRAST_ORDERS_MIXED
        separate = _stance(exhibit["id"], readings[:split])
        contrast = _stance(exhibit["id"], readings[split:])
        kept.append(separate if reader == "separate" else contrast if reader == "contrast" else mixed(separate, contrast, share))
    return kept


def _stance(exhibit_id: str, readings: Sequence[dict[StanceKey, float]]) -> Stance:
    return Stance(exhibit_id=exhibit_id, probabilities=mean_reading(readings), per_order=tuple(readings), method="logprobs")


def score(records: Sequence[dict[str, Any]], variant: Variant) -> dict[str, float]:
    ruled = [aggregate(stances_as(r, variant.reader, variant.share), variant.calibration) for r in records]
    gold3 = [r["gold"] for r in records]
    binary = [(a.calibrated, r["gold"] == "SUPPORTS") for a, r in zip(ruled, records, strict=True) if r["gold"] in BINARY]
    p = np.array([q for q, _ in binary])
    y = np.array([1.0 if s else 0.0 for _, s in binary])
    found = scores(p, y)  # accuracy, log loss, ECE and selective accuracy, as the fitter scores its folds
    return {
        "binary_claims": len(binary),
        **found,
        "auc": metrics.auc(p.tolist(), (y == 1).tolist()),
        "ece_if_calibrated": metrics.ece_of_a_calibrated_verdict(np.maximum(p, 1 - p).tolist())[0],
        "accuracy_3": metrics.accuracy(gold3, [a.label for a in ruled]),
        "macro_f1_3": metrics.macro_f1(gold3, [a.label for a in ruled], ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")),
    }


def parse_variant(text: str) -> Variant:
    """``NAME=READER:SHARE:CALIBRATION`` (CALIBRATION a JSON file, ``git:REV`` for the both-file at a commit, or ``none``)."""
    name, _, spec = text.partition("=")
    reader, share, where = [*spec.split(":", 2), "", ""][:3]
    if reader not in ("separate", "contrast", "both") or not name:
        raise SystemExit(f"--variant wants NAME=READER:SHARE:CALIBRATION, got {text!r}")
    if where == "none":
        calibration = None
    elif where.startswith("git:"):
        key = calibration_key(MODEL, reader)
        calibration = Calibration.from_json(json.loads(_shipped_at(where[4:], key)))
    elif where:
        calibration = Calibration.from_json(json.loads(Path(where).read_text()))
    else:
        calibration = load_shipped(MODEL, reader)
    return Variant(name, reader, float(share or 0.0), calibration)


def _shipped_at(rev: str, key: str) -> str:
    """The shipped calibration file ``key`` at commit ``rev`` (under calibration/data/ since the fitting moved into the package)."""
    for folder in ("pipelines/calibration/data", "pipelines/calibration"):
        shown = subprocess.run(["git", "show", f"{rev}:{folder}/{key}.json"], capture_output=True, text=True)
        if shown.returncode == 0:
            return shown.stdout
    raise SystemExit(f"no calibration {key} at {rev}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--variant", action="append", default=[], help="NAME=READER:SHARE:CALIBRATION (repeatable)")
    args = parser.parse_args()
    records = read_records(args.records)
    variants = [parse_variant(v) for v in args.variant] or [
        Variant("both (shipped)", "both", DeskConfig().contrast_share, load_shipped(MODEL, "both")),
        Variant("contrast (shipped)", "contrast", 1.0, load_shipped(MODEL, "contrast")),
    ]
    keys = ("accuracy", "auc", "log_loss", "ece", "ece_if_calibrated", "selective_50", "accuracy_3", "macro_f1_3")
    print(f"{len(records)} desk claims from {args.records}")
    print("| variant | " + " | ".join(keys) + " |")
    print("| --- |" + " ---: |" * len(keys))
    for variant in variants:
        found = score(records, variant)
        print(f"| {variant.name} | " + " | ".join(f"{found[k]:.3f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
