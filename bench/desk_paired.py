"""Two desk runs of the same claims side by side, from their records: each one's figures and the second's difference, paired.

    .venv/bin/python bench/desk_paired.py FIRST.jsonl[.gz] SECOND.jsonl[.gz] [--names contrast,verdict] [--resamples 2000]

The records are ``bench/desk.py --records`` files of one protocol over the same claims with two settings (say
``--set desk.reader=contrast`` and ``--set desk.reader=verdict``). Only the SUPPORTS/REFUTES claims both runs read
are compared. For each run: the likelier side right, right as ruled (NOT ENOUGH INFO wrong), AUC of p(supported),
ECE (10 bins), the deciding document among the exhibits, and the median calls and tokens the model read a claim.
Then the second run's difference from the first in AUC and in the likelier side, with a 95% interval from a paired
bootstrap over the claims (the same resampled claims for both runs), so a difference outside chance is told from one
inside it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk_rescore import read_records
from pipelines.eval import metrics

BINARY = ("SUPPORTS", "REFUTES")


def paired(first: Sequence[dict[str, Any]], second: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The SUPPORTS/REFUTES claims both runs read, in the first run's order; a claim read twice in one run counts once."""
    by_id = {r["id"]: r for r in second}
    seen: set[str] = set()
    pairs = []
    for record in first:
        other = by_id.get(record["id"])
        if other is None or record.get("p_supported") is None or other.get("p_supported") is None:
            continue
        if record["gold"] in BINARY and record["id"] not in seen:
            pairs.append((record, other))
            seen.add(record["id"])
    return pairs


def figures(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    p = [float(r["p_supported"]) for r in records]
    y = [r["gold"] == "SUPPORTS" for r in records]
    found = [bool(r["deciding_found"]) for r in records if r.get("deciding_found") is not None]
    ece = metrics.expected_calibration_error([max(q, 1 - q) for q in p], [(q >= 0.5) == t for q, t in zip(p, y, strict=True)])
    return {
        "likelier": float(np.mean([(q >= 0.5) == t for q, t in zip(p, y, strict=True)])),
        "as_ruled": float(np.mean([r["predicted"] == r["gold"] for r in records])),
        "auc": metrics.auc(p, y),
        "ece": ece if ece is not None else float("nan"),
        "deciding": float(np.mean(found)) if found else float("nan"),
        "calls": statistics.median(r["calls"] + r["cached_calls"] for r in records),
        "tokens_read": statistics.median(r.get("tokens_read") or r["tokens"] for r in records),
    }


def difference(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], resamples: int, seed: int = 51) -> dict[str, str]:
    """The second run's AUC and likelier-side accuracy less the first's, each with its 95% paired-bootstrap interval."""
    y = np.array([a["gold"] == "SUPPORTS" for a, _ in pairs])
    pa = np.array([float(a["p_supported"]) for a, _ in pairs])
    pb = np.array([float(b["p_supported"]) for _, b in pairs])
    rng = np.random.default_rng(seed)
    spread: dict[str, list[float]] = {"auc": [], "likelier": []}
    for _ in range(resamples):
        i = rng.integers(0, len(pairs), len(pairs))
        t = y[i]
        if t.all() or not t.any():
            continue  # one label only: no AUC
        spread["auc"].append(metrics.auc(pb[i].tolist(), t.tolist()) - metrics.auc(pa[i].tolist(), t.tolist()))
        spread["likelier"].append(float(np.mean((pb[i] >= 0.5) == t) - np.mean((pa[i] >= 0.5) == t)))
    point = {
        "auc": metrics.auc(pb.tolist(), y.tolist()) - metrics.auc(pa.tolist(), y.tolist()),
        "likelier": float(np.mean((pb >= 0.5) == y) - np.mean((pa >= 0.5) == y)),
    }
    out = {}
    for key, values in spread.items():
        low, high = np.percentile(values, [2.5, 97.5]) if values else (float("nan"), float("nan"))
        out[key] = f"{point[key]:+.3f} ({low:+.3f} to {high:+.3f})"
    return out


def table(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], names: Sequence[str], resamples: int) -> str:
    supported = sum(a["gold"] == "SUPPORTS" for a, _ in pairs)
    lines = [
        f"{len(pairs)} SUPPORTS/REFUTES claims read by both ({supported} SUPPORTS)",
        "",
        "| run | likelier side | as ruled | AUC | ECE | deciding document among the exhibits | calls / tokens read a claim (median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, side in zip(names, ([a for a, _ in pairs], [b for _, b in pairs]), strict=True):
        f = figures(side)
        lines.append(
            f"| {name} | {f['likelier']:.3f} | {f['as_ruled']:.3f} | {f['auc']:.3f} | {f['ece']:.3f} | {f['deciding']:.2f} "
            f"| {f['calls']:.0f} / {f['tokens_read']:,.0f} |"
        )
    d = difference(pairs, resamples)
    lines += [
        "",
        f"{names[1]} less {names[0]} (95% paired bootstrap, {resamples} resamples): AUC {d['auc']}, likelier side {d['likelier']}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--names", default="first,second", help="the two runs' names in the table, comma-separated")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    names = [n.strip() for n in args.names.split(",")]
    if len(names) != 2:
        parser.error("--names takes two names, comma-separated")
    pairs = paired(read_records(args.first), read_records(args.second))
    if len(pairs) < 2:
        parser.error("fewer than two SUPPORTS/REFUTES claims read by both runs: nothing to compare")
    print(table(pairs, names, args.resamples))


if __name__ == "__main__":
    main()
