"""Does reading 25 exhibits with the contrast question (2 orders) rule better than its first 5? Train CV, then dev if given.

    .venv/bin/python bench/analysis/fit_contrast25.py TRAIN_RECORDS.jsonl [DEV_RECORDS.jsonl]

Records of ``bench/desk.py --records`` with ``--set desk.reader=contrast --set desk.orders=2 --set desk.exhibits=25``.
Feature sets: net/gap/top over the first 5, 10 or all 25 exhibits, and the first 5's plus the other 20's net and gap.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, when run as a file

from bench import desk_rescore as rescore
from pipelines.calibration import fitting
from pipelines.eval import metrics
from pipelines.stages.stance import STANCES, Stance, mean_reading
from pipelines.stages.stance_aggregation import stance_features

VARIANTS = ("first5", "first10", "all25", "first5+deep")


def stances(record):
    out = []
    for x in record["exhibits"]:
        if x.get("round", 1) != 1:
            continue
        readings = tuple({s: float(p.get(s, 0.0)) for s in STANCES} for p in x["per_order"])
        out.append(Stance(exhibit_id=x["id"], probabilities=mean_reading(readings), per_order=readings, method="logprobs"))
    return out


def features(read, variant):
    three = ("net", "gap", "top")
    if variant == "first5":
        return [stance_features(read[:5])[n] for n in three]
    if variant == "first10":
        return [stance_features(read[:10])[n] for n in three]
    if variant == "all25":
        return [stance_features(read)[n] for n in three]
    deep = stance_features(read[5:]) if len(read) > 5 else {"net": 0.0, "gap": 0.0}
    return [stance_features(read[:5])[n] for n in three] + [deep["net"], deep["gap"]]


def load(path):
    records = [r for r in rescore.read_records(Path(path)) if r["gold"] in ("SUPPORTS", "REFUTES")]
    return records, np.array([1.0 if r["gold"] == "SUPPORTS" else 0.0 for r in records])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("train", help="train records (bench/desk.py --records)")
    parser.add_argument("dev", nargs="?", help="dev records, scored with the train fit")
    args = parser.parse_args()
    train, y = load(args.train)
    dev, y_dev = load(args.dev) if args.dev else ([], None)
    print(len(train), "train binary claims;", len(dev), "dev")
    for variant in VARIANTS:
        x = np.array([features(stances(r), variant) for r in train])
        cv = fitting.scores(fitting.cross_validated(x, y), y)
        bias, weights = fitting.fit_logistic(x, y)
        line = (
            f"{variant:<12} train CV acc {cv['accuracy']:.3f} loss {cv['log_loss']:.3f} ece {cv['ece']:.3f} "
            f"sel50 {cv['selective_50']:.3f} | weights {np.round(weights, 2).tolist()}"
        )
        if dev:
            p_dev = fitting.predict(bias, weights, np.array([features(stances(r), variant) for r in dev]))
            s = fitting.scores(p_dev, y_dev)
            auc = metrics.auc(p_dev.tolist(), (y_dev == 1).tolist())
            line += (
                f" || dev acc {s['accuracy']:.3f} auc {auc:.3f} loss {s['log_loss']:.3f} ece {s['ece']:.3f} sel50 {s['selective_50']:.3f}"
            )
        print(line)
    found = [r.get("deciding_found") for r in (dev or train) if r.get("deciding_found") is not None]
    print("deciding doc among the exhibits:", round(sum(found) / len(found), 3), "of", len(found), "binary claims")


if __name__ == "__main__":
    main()
