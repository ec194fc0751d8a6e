"""The refit on a desk's own reviewed claims, measured as a desk would meet it: some claims reviewed, the rest to come.

    .venv/bin/python bench/calibration_refit.py RECORDS.jsonl[.gz] [--reviewed 80] [--splits 200] [--reader contrast]
    .venv/bin/python bench/calibration_refit.py DEV_RECORDS --fit-on TRAIN_RECORDS [--exhibits 25] [--write FILE]
    .venv/bin/python bench/calibration_refit.py DEV_RECORDS --fit-on TRAIN_RECORDS --curve 20,50,100 [--draws 50]

Takes stored desk readings of labelled claims (``bench/desk.py --records``, e.g. Check-COVID
dev read with the contrast question over 25 exhibits), and over ``--splits`` random splits
of the SUPPORT/REFUTE claims: ``--reviewed`` of them play the claims an editor reviewed; the
calibration is refitted on them exactly as ``python -m pipelines calibrate --dataset reviewed
--refit`` does (``pipelines.eval.calibrate.compare_refit``: the shipped calibration against
the refit, cross-validated on the reviewed claims, the better kept), and the shipped one, the
refit and the one kept are scored on the other claims. Printed: the mean (and the 10th-90th
percentile range) of binary accuracy, log loss and ECE on the held-out claims, and how often
the refit was kept.

With ``--fit-on``: the calibration fitted by the package's flow (``fit_readings``, as
``python -m pipelines calibrate`` fits) on the stored readings of other claims (train), scored
on all of RECORDS' SUPPORT/REFUTE claims beside the shipped calibration: the stored-readings
stand-in for a live calibration run.

With ``--curve``: what a desk that brings N labelled claims of its own beat gets. For each N,
``--draws`` random sets of N claims from TRAIN_RECORDS are put through the one-step refit
(``compare_refit``, the better of the shipped calibration and the refit kept, as ``python -m
pipelines calibrate --refit`` keeps it), and the calibration kept is scored on all of RECORDS'
claims: the likelier side, the verdict as ruled (a NOT ENOUGH INFO counts wrong; the threshold
is the kept calibration's), ECE, selective accuracy on the surer half and AUC, each the mean over
the draws with its 10th-90th percentile range; the shipped calibration is the row N = 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk_rescore import MODEL, read_records, stances_as
from pipelines.calibration.files import load_shipped
from pipelines.calibration.fitting import scores
from pipelines.core.config import RunConfig
from pipelines.eval import metrics
from pipelines.eval.calibrate import LabelledClaim, LabelledSet, Reading, compare_refit, fit_readings
from pipelines.stages.stance_aggregation import aggregate, supported

BINARY = ("SUPPORTS", "REFUTES")


def readings_of(path: Path, reader: str, exhibits: int = 0) -> list[Reading]:
    """The records' SUPPORT/REFUTE claims as the calibration flow holds them: the claim, its label and its round-1 stances."""
    found = []
    for record in read_records(path):
        if record["gold"] not in BINARY:
            continue
        claim = LabelledClaim(str(record["id"]), str(record["claim"]), record["gold"])
        stances = stances_as(record, reader, 1.0)
        found.append(Reading(claim, str(record.get("run_id", record["id"])), tuple(stances[:exhibits] if exhibits else stances), "stored"))
    return found


def held_out(readings: list[Reading], calibration: object) -> dict[str, float]:
    p = np.array([supported(r.features, calibration) for r in readings])  # type: ignore[arg-type]
    y = np.array([1.0 if r.claim.label == "SUPPORTS" else 0.0 for r in readings])
    return scores(np.clip(p, 1e-6, 1 - 1e-6), y)


def as_ruled(readings: list[Reading], calibration: object) -> float:
    """The share of claims whose verdict, at the calibration's own threshold, is their label (NOT ENOUGH INFO is wrong)."""
    return float(np.mean([aggregate(r.stances, calibration).label == r.claim.label for r in readings]))  # type: ignore[arg-type]


def curve_point(
    train: list[Reading], test: list[Reading], config: RunConfig, shipped: object, size: int, draws: int
) -> dict[str, dict[str, list[float]]]:
    """``draws`` random sets of ``size`` train claims, each refit in one step; the refit and the calibration kept scored on ``test``."""
    rng = random.Random(size)
    y = [r.claim.label == "SUPPORTS" for r in test]
    found: dict[str, dict[str, list[float]]] = {
        which: {k: [] for k in ("accuracy", "as_ruled", "ece", "selective_50", "auc", "kept_refit", "refused")}
        for which in ("kept", "refit")
    }
    for _ in range(draws if size else 1):
        if size:
            chosen = rng.sample(train, size)
            labelled = LabelledSet(f"{size} claims of the beat", tuple(r.claim for r in chosen))
            comparison = compare_refit(chosen, config, labelled, shipped, logprobs=True)  # type: ignore[arg-type]
            refit = comparison.refitted.calibration or shipped
            calibrations = {"kept": refit if comparison.better == "refit" else shipped, "refit": refit}
        else:
            calibrations = {"kept": shipped, "refit": shipped}
        for which, calibration in calibrations.items():
            scored = held_out(test, calibration)
            for key in ("accuracy", "ece", "selective_50"):
                found[which][key].append(scored[key])
            found[which]["as_ruled"].append(as_ruled(test, calibration))
            found[which]["auc"].append(metrics.auc([supported(r.features, calibration) for r in test], y))  # type: ignore[arg-type]
            found[which]["kept_refit"].append(float(size > 0 and comparison.better == "refit"))
            found[which]["refused"].append(float(size > 0 and comparison.refitted.calibration is None))
    return found


def print_curve(train: list[Reading], test: list[Reading], config: RunConfig, shipped: object, sizes: list[int], draws: int) -> None:
    print(f"scored on {len(test)} claims; each N drawn {draws} times from {len(train)} train claims (N = 0: the shipped calibration)")
    print(
        "kept: the one-step refit's choice (the refit where its cross-validated log loss beats the shipped one's); refit: the "
        "refit always, except where it was refused (its readings did not tell the labels apart: the shipped one stays)"
    )
    print("| N labelled | calibration | likelier side | as ruled | ECE | selective @50% | AUC | refit kept | refit refused |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in [0, *sizes]:
        if size > len(train):
            print(f"| {size} | (only {len(train)} train claims) | | | | | | | |")
            continue
        found = curve_point(train, test, config, shipped, size, draws)
        for which in ("kept", "refit") if size else ("kept",):
            cells = []
            for key in ("accuracy", "as_ruled", "ece", "selective_50", "auc"):
                values = np.array(found[which][key])
                spread = f" ({np.percentile(values, 10):.3f}-{np.percentile(values, 90):.3f})" if size else ""
                cells.append(f"{values.mean():.3f}{spread}")
            kept = f"{np.mean(found[which]['kept_refit']):.2f} | {np.mean(found[which]['refused']):.2f}" if size else "n/a | n/a"
            print(f"| {size} | {which if size else 'shipped'} | " + " | ".join(cells) + f" | {kept} |")


def fit_and_score(train: list[Reading], test: list[Reading], config: RunConfig, shipped: object, write: Path | None) -> None:
    labelled = LabelledSet(f"{len(train)} train claims", tuple(r.claim for r in train))
    fitted = fit_readings(train, config, labelled, logprobs=True, current=shipped)  # type: ignore[arg-type]
    cv = fitted.fit.cross_validated
    print(
        f"fitted on {len(train)} claims: cross-validated accuracy {cv['accuracy']:.3f}, log loss {cv['log_loss']:.3f}, ECE {cv['ece']:.3f}, AUC {cv['auc']:.3f}"
    )
    if fitted.calibration is None:
        print(fitted.refused)
        return
    print(f"  weights {fitted.calibration.weights}, bias {fitted.calibration.bias}")
    print(f"scored on {len(test)} other claims:")
    print("| calibration | accuracy | log loss | ECE | selective @50% |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, calibration in (("shipped", shipped), ("fitted here", fitted.calibration)):
        s = held_out(test, calibration)
        print(f"| {name} | {s['accuracy']:.3f} | {s['log_loss']:.3f} | {s['ece']:.3f} | {s['selective_50']:.3f} |")
    if write is not None:
        write.write_text(json.dumps(fitted.calibration.to_json(), indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--reviewed", type=int, default=80)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--reader", default="contrast")
    parser.add_argument("--fit-on", type=Path, default=None, help="records of other claims (train) to fit on, then score RECORDS")
    parser.add_argument("--exhibits", type=int, default=0, help="read the first N exhibits of each record (0: all)")
    parser.add_argument("--write", type=Path, default=None, help="with --fit-on: write the fitted calibration here")
    parser.add_argument("--curve", default="", help="with --fit-on: label counts to draw from TRAIN, e.g. 20,50,100")
    parser.add_argument("--draws", type=int, default=50, help="with --curve: random sets drawn for each label count")
    args = parser.parse_args()

    readings = readings_of(args.records, args.reader, args.exhibits)
    shipped = load_shipped(MODEL, args.reader)
    config = RunConfig().model_copy(update={"desk": RunConfig().desk.model_copy(update={"reader": args.reader})})
    if args.fit_on is not None and args.curve:
        sizes = [int(n) for n in args.curve.split(",") if n.strip()]
        print_curve(readings_of(args.fit_on, args.reader, args.exhibits), readings, config, shipped, sizes, args.draws)
        return
    if args.fit_on is not None:
        fit_and_score(readings_of(args.fit_on, args.reader, args.exhibits), readings, config, shipped, args.write)
        return
    rng = random.Random(0)
    found: dict[str, list[dict[str, float]]] = {"shipped": [], "refit": [], "kept": []}
    kept_refit = 0
    for _ in range(args.splits):
        order = list(range(len(readings)))
        rng.shuffle(order)
        reviewed = [readings[i] for i in order[: args.reviewed]]
        rest = [readings[i] for i in order[args.reviewed :]]
        labelled = LabelledSet("reviewed", tuple(r.claim for r in reviewed))
        comparison = compare_refit(reviewed, config, labelled, shipped, logprobs=True)
        refit = comparison.refitted.calibration
        found["shipped"].append(held_out(rest, shipped))
        found["refit"].append(held_out(rest, refit) if refit is not None else held_out(rest, shipped))
        found["kept"].append(found["refit"][-1] if comparison.better == "refit" else found["shipped"][-1])
        kept_refit += comparison.better == "refit"
    print(
        f"{len(readings)} SUPPORT/REFUTE claims from {args.records}; {args.reviewed} reviewed, {len(readings) - args.reviewed} held out; {args.splits} splits"
    )
    print("| calibration | accuracy | log loss | ECE | selective @50% |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, rows in found.items():
        cells = []
        for key in ("accuracy", "log_loss", "ece", "selective_50"):
            values = np.array([r[key] for r in rows])
            cells.append(f"{values.mean():.3f} ({np.percentile(values, 10):.3f}-{np.percentile(values, 90):.3f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"the refit was kept in {kept_refit} of {args.splits} splits (lower cross-validated log loss on the reviewed claims)")


if __name__ == "__main__":
    main()
