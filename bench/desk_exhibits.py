"""How many exhibits desk should read: the calibration fitted on train and scored on dev, for each count, from stored runs.

    .venv/bin/python bench/desk_exhibits.py --train-dir DIR --dev-dir DIR [--counts 2,3,4,5,6,8] [--orders 3]

Both folders hold desk runs that read more exhibits than any count asked for (``bench/desk.py
--set desk.exhibits=8``): a run with fewer exhibits reads exactly the first ones (the search
ranks documents the same whatever k is, and each exhibit's stance does not depend on the
others), so each count is scored without calling the model again. For each count, the
calibration is fitted on the train runs only and applied to the dev runs; printed per count:
binary accuracy, log loss, ECE and selective accuracy at 50% on dev (SUPPORT/REFUTE claims),
and how often the deciding document is among the exhibits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fit_desk_calibration import Example, design, examples_from_store
from pipelines.calibration.fitting import fit_logistic, predict, scores
from pipelines.core.config import AppSettings
from pipelines.core.events import ExhibitStanceRead
from pipelines.eval.datasets import load_dataset
from pipelines.record.digest import digest
from pipelines.record.store import RunStore


def labelled(data_dir: Path, split: str) -> list[Example]:
    dataset = load_dataset("check-covid", split, checkcovid_dir=AppSettings().checkcovid_dir)
    gold = {" ".join(i.claim.split()): i.label for i in dataset.items if i.label != "NOT ENOUGH INFO"}
    return [
        Example(claim, gold[" ".join(claim.split())], stances, settings)
        for claim, stances, settings in examples_from_store(data_dir)
        if " ".join(claim.split()) in gold and stances
    ]


def deciding_found(data_dir: Path, split: str, count: int) -> float:
    """Share of SUPPORT/REFUTE claims whose deciding document is among the first ``count`` exhibits read."""
    dataset = load_dataset("check-covid", split, checkcovid_dir=AppSettings().checkcovid_dir)
    docs = {" ".join(i.claim.split()): {g.doc_id for g in i.gold_evidence} for i in dataset.items if i.label != "NOT ENOUGH INFO"}
    store = RunStore(AppSettings(data_dir=data_dir).sqlite_url)
    found = []
    seen: set[str] = set()
    for run in store.list_runs(limit=100_000):
        key = " ".join(run.claim.split())
        if run.protocol != "desk" or key not in docs or key in seen:
            continue
        seen.add(key)
        events = store.events(run.id)
        doc_of = {eid: item.doc_id for eid, item in digest(events).evidence.items()}
        read = [doc_of.get(e.evidence_id) for e in events if isinstance(e, ExhibitStanceRead) and e.round == 1][:count]
        found.append(bool(docs[key] & set(read)))
    return float(np.mean(found)) if found else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-dir", required=True)
    parser.add_argument("--dev-dir", required=True)
    parser.add_argument("--counts", default="2,3,4,5,6,8")
    parser.add_argument("--orders", type=int, default=3)
    parser.add_argument("--features", default="net")
    args = parser.parse_args()
    names = tuple(n.strip() for n in args.features.split(",") if n.strip())
    train, dev = labelled(Path(args.train_dir), "train"), labelled(Path(args.dev_dir), "dev")
    dev = list({" ".join(e.claim.split()): e for e in dev}.values())  # a repeated text is one claim's answer
    print(
        f"calibration fitted on {len(train)} train claims, scored on {len(dev)} dev SUPPORT/REFUTE claims; features {names}, {args.orders} orders"
    )
    print("| exhibits | dev binary accuracy | log loss | ECE | selective acc. @50% | deciding doc among the exhibits |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for count in [int(c) for c in args.counts.split(",")]:
        x_train, y_train = design(train, names, count, args.orders)
        bias, weights = fit_logistic(x_train, y_train)
        x_dev, y_dev = design(dev, names, count, args.orders)
        s = scores(predict(bias, weights, x_dev), y_dev)
        found = deciding_found(Path(args.dev_dir), "dev", count)
        print(f"| {count} | {s['accuracy']:.3f} | {s['log_loss']:.3f} | {s['ece']:.3f} | {s['selective_50']:.3f} | {found:.3f} |")


if __name__ == "__main__":
    main()
