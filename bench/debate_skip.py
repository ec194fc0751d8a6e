"""How many claims a grounded debate leaves undebated (``belief.debate_when=contested``), and why.

    .venv/bin/python bench/debate_skip.py [--records docs/measurements/data/deep-exhibits-2026-11-24/dev25r.jsonl.gz]
        [--settled-at 0.9] [--corpus check-covid] [--reader contrast] [--model qwen2.5-coder-1.5b-instruct-q4_k_m]

No model calls. A debate grounded in desk's exhibits first reads them as desk does; with
``debate_when=contested`` it stops there when ``why_settled`` says the reading settles the claim,
or when ``why_uncontested`` says no debate could change the verdict (the calibrated reading is the
verdict, as by default, and no strong exhibits point both ways). Each exhibit's stance is read on
its own, so a records file of ``bench/desk.py --records`` with every exhibit read (stored
readings of the shipped reader) holds that reading: its exhibits are
taken in retrieval order up to where ``desk.stop_early`` stops, weighed with the shipped
calibration, and handed to the app's own rules. Printed for all claims and for the SUPPORT/REFUTE
ones: how many each rule leaves undebated, how often those verdicts are right (3 labels against
the gold), and how many are left to debate.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reading_cut import DEFAULT_RECORDS, print_table, read_records, shipped_calibration, stances_of, stop_at
from pipelines.calibration.files import Calibration
from pipelines.core.config import BeliefConfig
from pipelines.core.domain import Evidence
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.stages.exhibit_reading import Reading, why_settled, why_uncontested
from pipelines.stages.stance_aggregation import aggregate


def reading_of(record: dict[str, Any], calibration: Calibration, corpus: str) -> Reading:
    """The record's exhibits as a grounded debate reads them before it starts: in retrieval order, stopping as desk does."""
    cfg = DeskConfig()
    stances = stances_of(record)
    read, bounds = stop_at(stances, calibration)
    kept = stances[:read]
    exhibits = [Evidence(id=s.exhibit_id, source="corpus", text="", corpus=corpus) for s in kept]
    result = aggregate(kept, calibration, strong_at=cfg.strong_at, decide_at=cfg.decide_at)
    return Reading(exhibits, {e.id: e for e in exhibits}, {s.exhibit_id: s for s in kept}, {}, "", calibration, result, bounds)


def tally(records: Sequence[dict[str, Any]], calibration: Calibration, corpus: str, at: float) -> dict[str, dict[str, Any]]:
    """Per group of claims (all, SUPPORT/REFUTE): how many a grounded debate leaves undebated and why, and how often the verdict
    of each part is right (the same verdict with the debate run: ``why_uncontested``)."""
    groups: dict[str, dict[str, Any]] = {}
    for name, keep in (("all claims", lambda g: True), ("SUPPORT/REFUTE claims", lambda g: g in ("SUPPORTS", "REFUTES"))):
        chosen = [r for r in records if r.get("exhibits") and keep(r["gold"])]
        parts: dict[str, list[bool]] = {"settled": [], "uncontested": [], "debated": []}
        for record in chosen:
            reading = reading_of(record, calibration, corpus)
            part = "settled" if why_settled(reading, corpus, at) else "uncontested" if why_uncontested(reading) else "debated"
            parts[part].append(reading.result.label == record["gold"])
        not_run = len(parts["settled"]) + len(parts["uncontested"])
        groups[name] = {
            "claims": len(chosen),
            "not debated: the exhibits settle it": len(parts["settled"]),
            "their verdicts right": _share(parts["settled"]),
            "not debated: no debate could change it": len(parts["uncontested"]),
            "their verdicts right (the same as after a debate)": _share(parts["uncontested"]),
            "debated: strong exhibits both ways": len(parts["debated"]),
            "share not debated (settled rule alone)": len(parts["settled"]) / len(chosen) if chosen else 0.0,
            "share not debated (both rules)": not_run / len(chosen) if chosen else 0.0,
        }
    return groups


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=Path, default=DEFAULT_RECORDS)
    parser.add_argument("--settled-at", type=float, default=BeliefConfig().settled_at)
    parser.add_argument("--corpus", default="check-covid", help="the corpus the records' claims were searched in")
    parser.add_argument("--reader", default="contrast")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    args = parser.parse_args()
    calibration = shipped_calibration(args.model, args.reader)
    print(f"{args.records.name}, calibration {calibration.name}, settled at {args.settled_at}, corpus {args.corpus}\n")
    print_table(tally(read_records(args.records), calibration, args.corpus, args.settled_at))


if __name__ == "__main__":
    main()
