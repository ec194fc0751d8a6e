"""Where desk's reading fails on a dev set: retrieval, the stance question, the model's lean, the aggregation, the abstention.

    .venv/bin/python bench/reading_failures.py RECORDS [RECORDS ...] --dataset DATASET [--dataset DATASET2] [--split dev]

No model calls. Takes desk records (``bench/desk.py --records``, every exhibit's stance kept,
so run with ``--set desk.stop_early=false``) and the dataset they were read from (its claims
name their deciding documents), and takes the verdict apart, one stage at a time, on the
SUPPORTS/REFUTES claims:

- retrieval: the deciding document among the exhibits;
- the stance question: how well the deciding exhibit's own reading (the log-odds of SUPPORTS
  against REFUTES) separates supported from refuted claims (AUC), where it was found, and
  how much the model took it to address the claim;
- the model's lean: the mean log-odds over every exhibit (0 is no lean) and over the deciding
  exhibits of each label;
- the aggregation: the AUC of the aggregated p(supported) beside the deciding exhibit's alone,
  the first exhibit's and the plain mean over the exhibits;
- the abstention: how many verdicts were NOT ENOUGH INFO, and the likelier side against the
  verdict as ruled.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk_rescore import read_records
from pipelines.core.config import AppSettings
from pipelines.eval.datasets import load_dataset
from pipelines.eval.metrics import auc

BINARY = ("SUPPORTS", "REFUTES")


def log_odds(p: dict[str, float]) -> float:
    """A reading (SUPPORTS, REFUTES, UNRELATED probabilities) as the log-odds of SUPPORTS against REFUTES."""
    return math.log(max(p["SUPPORTS"], 1e-6) / max(p["REFUTES"], 1e-6))


def _auc(scores: list[float], positive: list[bool]) -> str:
    return f"{auc(scores, positive):.3f}" if any(positive) and not all(positive) else "n/a"


def analyse(records: list[dict], deciding: dict[str, set[str]]) -> dict[str, object]:
    """The stage-by-stage figures of one records file's desk claims."""
    rows = [r for r in records if r.get("protocol", "desk") == "desk" and r["gold"] in BINARY]
    y = [r["gold"] == "SUPPORTS" for r in rows]
    found = [[e for e in r["exhibits"] if e.get("doc_id") in deciding.get(str(r["id"]), set())] for r in rows]
    with_deciding = [i for i, f in enumerate(found) if f]
    gold_odds = [log_odds(found[i][0]["probabilities"]) for i in with_deciding]
    every = [log_odds(e["probabilities"]) for r in rows for e in r["exhibits"]]
    nei = [r["predicted"] == "NOT ENOUGH INFO" for r in rows]
    likelier = [(r["p_supported"] >= 0.5) == (r["gold"] == "SUPPORTS") for r in rows]
    as_ruled = [r["predicted"] == r["gold"] for r in rows]
    return {
        "claims": len(rows),
        "deciding among the exhibits": f"{len(with_deciding)} ({len(with_deciding) / max(1, len(rows)):.2f})",
        "deciding exhibit's first place (median rank)": f"{np.median([1 + r['exhibits'].index(found[i][0]) for i, r in enumerate(rows) if found[i]]):.0f}"
        if with_deciding
        else "n/a",
        "AUC, the deciding exhibit alone (where found)": _auc(gold_odds, [y[i] for i in with_deciding]),
        "p(addresses the claim), deciding exhibit": f"{np.mean([1 - found[i][0]['probabilities']['UNRELATED'] for i in with_deciding]):.3f}"
        if with_deciding
        else "n/a",
        "lean: mean log-odds S:R, every exhibit": f"{np.mean(every):+.3f}",
        "lean: deciding exhibit, SUPPORTS claims": _mean_of(gold_odds, [y[i] for i in with_deciding], True),
        "lean: deciding exhibit, REFUTES claims": _mean_of(gold_odds, [y[i] for i in with_deciding], False),
        "AUC, aggregated p(supported)": _auc([r["p_supported"] for r in rows], y),
        "AUC, the first exhibit": _auc(
            [log_odds(r["exhibits"][0]["probabilities"]) for r in rows if r["exhibits"]],
            [y[i] for i, r in enumerate(rows) if r["exhibits"]],
        ),
        "AUC, mean log-odds over the exhibits": _auc(
            [float(np.mean([log_odds(e["probabilities"]) for e in r["exhibits"]] or [0.0])) for r in rows], y
        ),
        "NOT ENOUGH INFO verdicts": f"{sum(nei)} ({sum(nei) / max(1, len(rows)):.2f})",
        "the likelier side right": f"{np.mean(likelier):.3f}",
        "right as ruled": f"{np.mean(as_ruled):.3f}",
    }


def _mean_of(values: list[float], labels: list[bool], label: bool) -> str:
    kept = [v for v, y in zip(values, labels, strict=True) if y == label]
    return f"{np.mean(kept):+.3f} ({len(kept)})" if kept else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path, nargs="+", help="desk records (JSON lines, gzip allowed)")
    parser.add_argument(
        "--dataset", required=True, action="append", help="check-covid, or a JSONL file of claims the records were read from (repeatable)"
    )
    parser.add_argument("--split", default="dev")
    args = parser.parse_args()
    deciding = {}
    for name in args.dataset:
        dataset = load_dataset(name, args.split, checkcovid_dir=AppSettings().checkcovid_dir)
        deciding.update({item.id: {g.doc_id for g in item.gold_evidence} for item in dataset.items})
    columns = {path.name: analyse(list(read_records(path)), deciding) for path in args.records}
    names = list(columns)
    print("| stage | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for key in next(iter(columns.values())):
        print(f"| {key} | " + " | ".join(str(columns[n][key]) for n in names) + " |")


if __name__ == "__main__":
    main()
