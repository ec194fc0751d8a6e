"""Fit the desk verdict's calibration for one model on Check-COVID *train* claims, and write its versioned file.

    .venv/bin/python bench/fit_desk_calibration.py --data-dir DIR [--split train] [--exhibits N] [--orders K]
        [--write] [--model qwen2.5-coder-1.5b-instruct-q4_k_m.gguf]

How the runs read their exhibits (unit, negation, worked examples) is taken from their own
settings, and written into the calibration so a run read another way is flagged.

Reads the stances of stored `desk` runs (made with ``bench/desk.py --split train --data-dir DIR``,
or any records file from ``--records``), matches each run to its claim's gold label by the
claim's text, and fits p(supported) = sigmoid(bias + w . features) by logistic regression
(small L2) on the SUPPORT/REFUTE claims. Printed: 5-fold cross-validated binary accuracy, log
loss and ECE for each feature set and for the first N exhibits / first K option orders (so
the defaults can be chosen on train), then the fit on all claims. The NOT ENOUGH INFO
threshold (``decide_at``) is the one that maximises 3-label macro-F1 on train, where each
NOT ENOUGH INFO claim takes the features of the SUPPORT/REFUTE claim with the same text
(Check-COVID repeats them word for word). ``--write`` saves the calibration to
``pipelines/calibration/data/<model>[--reader].json`` (the shipped default) with what it was fitted on.
The fit itself (``pipelines.calibration.fitting``) is the one ``python -m pipelines calibrate`` uses.

The reader ``both`` (the separate questions and the contrast one, weighed) is fitted from runs
read with it (their two questions' readings are told apart, so the share can be chosen again),
and from two folders of runs on the same claims, one per question: ``--data-dir`` the separate
question's, ``--mix-with`` the contrast question's (``--set desk.reader=contrast --set desk.orders=2``).
``--data-dir`` can be given more than once, e.g. for a larger sample read in parts
(``bench/desk.py --limit N --skip M``). ``--reader contrast`` fits the contrast question alone,
from contrast runs and from the contrast readings of runs read with ``both``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.calibration.files import FITTED_DEFAULTS, Calibration, calibration_key, prompt_sha
from pipelines.calibration.fitting import best_decide_at, cross_validated, fit_logistic, predict, scores
from pipelines.core.config import AppSettings
from pipelines.core.events import ExhibitStanceRead
from pipelines.eval.calibrate import stance_from_event
from pipelines.eval.datasets import load_dataset
from pipelines.record.digest import digest
from pipelines.record.store import RunStore
from pipelines.stages.stance import CONTRAST_ORDERS_MIXED, STANCES, Stance, mixed
from pipelines.stages.stance_aggregation import stance_features

FEATURE_SETS = (("net",), ("gap",), ("net", "gap"), ("net", "gap", "top"))
READER_SETTINGS: dict[str, Any] = {
    "unit": "passage",
    "contrast_share": None,
    **FITTED_DEFAULTS,
}  # how the runs read their exhibits (their desk settings)
CALIBRATION_DIR = Path(__file__).resolve().parents[1] / "pipelines" / "calibration" / "data"


@dataclass(frozen=True)
class Example:
    claim: str
    gold: str
    stances: tuple[Stance, ...]  # round-1 readings, in the order the run read them
    settings: dict[str, Any]


def examples_from_store(data_dir: Path) -> list[tuple[str, tuple[Stance, ...], dict[str, Any]]]:
    """Every completed desk run in the data folder's store: (claim, round-1 stances, the run's desk settings)."""
    store = RunStore(AppSettings(data_dir=data_dir).sqlite_url)
    found = []
    for run in store.list_runs(limit=100_000):
        if run.protocol != "desk" or run.status != "completed":
            continue
        events = store.events(run.id)
        settings = dict(digest(events).config.get("desk", {}))
        stances = tuple(stance_from_event(e) for e in events if isinstance(e, ExhibitStanceRead) and e.round == 1)
        found.append((run.claim, stances, settings))
    return found


def truncated(stances: Sequence[Stance], exhibits: int, orders: int, *, read_orders: int = 0) -> list[Stance]:
    """The stances a run with fewer exhibits / fewer option orders would have read (the first ones).

    A stance with twice the run's ``read_orders`` readings was also read against the claim's
    opposite (``desk.negation``): the first ``orders`` of each half are kept.
    """
    kept = []
    for s in stances[:exhibits]:
        if read_orders > 0 and len(s.per_order) not in (read_orders, 2 * read_orders):  # both questions mixed: kept as read
            kept.append(s)
            continue
        both = read_orders > 0 and len(s.per_order) == 2 * read_orders
        used = (s.per_order[:orders] + s.per_order[read_orders : read_orders + orders]) if both else s.per_order[:orders]
        used = used or (s.probabilities,)
        averaged = {k: sum(p[k] for p in used) / len(used) for k in STANCES}
        kept.append(Stance(exhibit_id=s.exhibit_id, probabilities=averaged, per_order=tuple(used), method=s.method))  # type: ignore[arg-type]
    return kept


SHARES = (0.0, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0)


Pair = tuple[Example, list[Stance], list[Stance]]  # a claim, its exhibits read by the separate questions and by the contrast one


def pairs_from_folders(separate: Sequence[Example], contrast_dir: Path, exhibits: int) -> list[Pair]:
    """Claims read by the separate questions in one folder's runs and by the contrast question in another's, on the same exhibits."""
    contrast = {" ".join(c.split()): st for c, st, cfg in examples_from_store(contrast_dir) if cfg.get("reader") == "contrast" and st}
    pairs = []
    for e in separate:
        other = contrast.get(" ".join(e.claim.split()))
        if other is None:
            continue
        mine = truncated(e.stances, exhibits, int(e.settings.get("orders", 3)), read_orders=int(e.settings.get("orders", 3)))
        theirs = truncated(other, exhibits, 2, read_orders=2)
        if [s.exhibit_id for s in mine] != [s.exhibit_id for s in theirs]:
            continue  # not the same exhibits: the two runs searched differently
        pairs.append((e, mine, theirs))
    return pairs


def pairs_from_both(examples: Sequence[Example], exhibits: int) -> list[Pair]:
    """Claims read with the reader 'both': each exhibit's readings split back into the separate questions' and the contrast one's.

    A 'both' run keeps every reading, the separate questions' first (``orders`` of them, twice
    that when the opposite was read too) and the contrast question's last (``stance.mixed``).
    """
    pairs = []
    for e in examples:
        orders = int(e.settings.get("orders", 3))
        separate_count = orders * (2 if e.settings.get("negation") else 1)
        mine, theirs = [], []
        for s in e.stances[:exhibits]:
            if len(s.per_order) <= separate_count:
                break  # not read by both questions (a run stopped short): the claim is left out
            head, tail = s.per_order[:separate_count], s.per_order[separate_count:]
            mine.append(Stance(exhibit_id=s.exhibit_id, probabilities=_average(head), per_order=head, method=s.method))
            theirs.append(Stance(exhibit_id=s.exhibit_id, probabilities=_average(tail), per_order=tail, method=s.method))
        else:
            pairs.append((Example(e.claim, e.gold, e.stances, {**e.settings, "reader": "separate"}), mine, theirs))
    return pairs


def reading_at_least(examples: Sequence[Example], exhibits: int) -> list[Example]:
    """The runs set to read at least ``exhibits`` exhibits (every run when 0): one set to read 5 cannot stand for one that reads 25.

    A run that found fewer than it was set to read is kept: a run with the fitted setting would have found as few.
    """
    return [e for e in examples if int(e.settings.get("exhibits", 0) or 0) >= exhibits]


def contrast_examples(examples: Sequence[Example], read_both: Sequence[Example], exhibits: int) -> list[Example]:
    """The contrast question alone: runs read with it, and the contrast readings of runs read with 'both' (the same question, 2 orders)."""
    found: dict[str, Example] = {}
    for e in examples:
        if e.settings.get("reader") == "contrast":
            found.setdefault(" ".join(e.claim.split()), e)
    for e, _, theirs in pairs_from_both(read_both, exhibits):
        settings = {**e.settings, "reader": "contrast", "orders": CONTRAST_ORDERS_MIXED, "contrast_share": None}
        found.setdefault(" ".join(e.claim.split()), Example(e.claim, e.gold, tuple(theirs), settings))
    print(f"{len(found)} claims read by the contrast question")
    return list(found.values())


def _average(readings: Sequence[dict[Any, float]]) -> dict[Any, float]:
    return {k: sum(p[k] for p in readings) / len(readings) for k in STANCES}


def weigh_pairs(pairs: Sequence[Pair], exhibits: int, share: float, names: Sequence[str] = ("net",)) -> list[Example]:
    """Examples read with the reader 'both' at ``share``, or at the share with the least cross-validated log loss on these claims.

    The share is chosen with the calibration's own features (``names``): it is fitted with them.

    A 'both' run asks exactly these questions of the same exhibits, so its stances are the two
    readings weighed (``stance.mixed``).
    """
    if len(pairs) < 20:
        raise SystemExit(f"only {len(pairs)} claims read by both questions on the same exhibits: run the contrast question on these claims")

    def at(share: float) -> list[Example]:
        return [
            Example(
                e.claim,
                e.gold,
                tuple(mixed(a, b, share) for a, b in zip(mine, theirs, strict=True)),
                {**e.settings, "reader": "both", "contrast_share": share},
            )
            for e, mine, theirs in pairs
        ]

    if not share:
        print(
            f"contrast share (0: the separate questions alone, 1: the contrast question alone), {','.join(names)}, 5-fold cross-validated:"
        )
        print("share    acc    loss   ECE   sel50")
        found = {s: cross_validate(at(s), names, exhibits, 99) for s in SHARES}
        for s, v in found.items():
            print(f"{s:<5}  {v['accuracy']:.3f}  {v['log_loss']:.3f} {v['ece']:.3f}  {v['selective_50']:.3f}")
        share = min(found, key=lambda s: (round(found[s]["log_loss"], 3), s))
    print(f"{len(pairs)} claims read by both questions on the same exhibits; contrast share {share}")
    return at(share)


def design(examples: Sequence[Example], names: Sequence[str], exhibits: int, orders: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.array(
        [
            [stance_features(truncated(e.stances, exhibits, orders, read_orders=int(e.settings.get("orders", 3))))[n] for n in names]
            for e in examples
        ],
        dtype=float,
    )
    y = np.array([1.0 if e.gold == "SUPPORTS" else 0.0 for e in examples])
    return x, y


def cross_validate(examples: Sequence[Example], names: Sequence[str], exhibits: int, orders: int, folds: int = 5) -> dict[str, float]:
    x, y = design(examples, names, exhibits, orders)
    return scores(cross_validated(x, y, folds), y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", required=True, action="append", help="data folder of the desk runs on train claims (repeatable)")
    parser.add_argument("--split", default="train")
    parser.add_argument("--exhibits", type=int, default=0, help="fit on the first N exhibits (0: the runs' own setting)")
    parser.add_argument("--orders", type=int, default=0, help="fit on the first K option orders (0: all read)")
    parser.add_argument("--features", default="net,gap,top")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    parser.add_argument(
        "--mix-with",
        default="",
        help="data folder of contrast-question runs (desk.reader=contrast) on the same claims: fit the reader 'both' from the two",
    )
    parser.add_argument(
        "--contrast-share", type=float, default=0.0, help="with --mix-with: the contrast share to fit (0: the best on train)"
    )
    parser.add_argument(
        "--reader",
        choices=("", "contrast"),
        default="",
        help="contrast: fit the contrast question alone, from contrast runs and the contrast readings of runs read with 'both'",
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    settings = AppSettings()
    dataset = load_dataset("check-covid", args.split, checkcovid_dir=settings.checkcovid_dir)
    gold_by_text: dict[str, str] = {}
    for item in dataset.items:
        if item.label != "NOT ENOUGH INFO":
            gold_by_text.setdefault(" ".join(item.claim.split()), item.label)
    runs = [run for folder in args.data_dir for run in examples_from_store(Path(folder))]
    examples = [
        Example(claim, gold_by_text[" ".join(claim.split())], stances, run_settings)
        for claim, stances, run_settings in runs
        if " ".join(claim.split()) in gold_by_text and stances
    ]
    unread = [
        e
        for e in examples
        if e.settings.get("negation")
        and e.settings.get("reader", "separate") == "separate"
        and any(len(s.per_order) != 2 * int(e.settings.get("orders", 3)) for s in e.stances)
    ]
    if unread:
        print(f"left out {len(unread)} claims whose opposite was not read (desk now states it plainly when the model writes none)")
        examples = [e for e in examples if e not in unread]
    if len(examples) < 20:
        raise SystemExit(f"only {len(examples)} desk runs on {args.split} claims found in {args.data_dir}: run bench/desk.py first")
    kept = reading_at_least(examples, args.exhibits)
    if len(kept) < len(examples):
        print(f"left out {len(examples) - len(kept)} runs set to read fewer than {args.exhibits} exhibits")
        examples = kept
    read_both = [e for e in examples if e.settings.get("reader") == "both"]
    if args.reader == "contrast":
        examples = contrast_examples(examples, read_both, args.exhibits or 5)
    elif args.mix_with or read_both:
        exhibits = args.exhibits or 5
        separate = [e for e in examples if e.settings.get("reader", "separate") == "separate"]
        pairs = pairs_from_both(read_both, exhibits)
        if args.mix_with:
            pairs += pairs_from_folders(separate, Path(args.mix_with), exhibits)
        unique: dict[str, Pair] = {}
        for pair in pairs:
            unique.setdefault(" ".join(pair[0].claim.split()), pair)  # a claim read twice: its first reading
        names = tuple(n.strip() for n in args.features.split(",") if n.strip())
        examples = weigh_pairs(list(unique.values()), exhibits, args.contrast_share, names)
    read_exhibits = max(len(e.stances) for e in examples)  # the runs' setting; a claim with fewer found exhibits keeps them all
    reader = {key: sorted({str(e.settings.get(key, default)) for e in examples}) for key, default in READER_SETTINGS.items()}
    mixed = {key: values for key, values in reader.items() if len(values) > 1}
    if mixed:
        raise SystemExit(f"the runs in {args.data_dir} were read in different ways ({mixed}): fit on one reader at a time")
    read_orders = min(int(e.settings.get("orders", 3)) for e in examples)
    supports = sum(e.gold == "SUPPORTS" for e in examples)
    print(
        f"{len(examples)} train claims ({supports} SUPPORT, {len(examples) - supports} REFUTE); up to {read_exhibits} exhibits, {read_orders} orders"
    )

    print("\n5-fold cross-validated on train (binary): accuracy / log loss / ECE / selective accuracy @50%")
    print(f"{'features':<16} {'exhibits':>8} {'orders':>6}   acc    loss   ECE   sel50")
    for names in FEATURE_SETS:
        for exhibits in sorted({2, 3, 4, 5, 6, read_exhibits}):
            if exhibits > read_exhibits:
                continue
            for orders in sorted({1, read_orders}):
                s = cross_validate(examples, names, exhibits, orders)
                print(
                    f"{','.join(names):<16} {exhibits:>8} {orders:>6}  {s['accuracy']:.3f}  {s['log_loss']:.3f} {s['ece']:.3f}  {s['selective_50']:.3f}"
                )

    names = tuple(n.strip() for n in args.features.split(",") if n.strip())
    exhibits = args.exhibits or read_exhibits
    orders = args.orders or read_orders
    x, y = design(examples, names, exhibits, orders)
    bias, weights = fit_logistic(x, y)
    fitted = scores(predict(bias, weights, x), y)
    cv = cross_validate(examples, names, exhibits, orders)
    q_by_claim = {" ".join(e.claim.split()): float(p) for e, p in zip(examples, predict(bias, weights, x), strict=True)}
    gold_three = [(" ".join(i.claim.split()), i.label) for i in dataset.items]
    decide_at, f1 = best_decide_at(q_by_claim, gold_three)
    print(f"\nfit on all {len(examples)}: bias {bias:.3f}, weights {dict(zip(names, np.round(weights, 3).tolist(), strict=True))}")
    print(f"  on train: {fitted}; cross-validated: {cv}")
    print(f"  NOT ENOUGH INFO below {decide_at:.2f} (3-label macro-F1 on train {f1:.3f})")
    if args.write:
        reader_name = str(examples[0].settings.get("reader", "separate"))
        key = calibration_key(args.model, reader_name)
        calibration = Calibration(
            name=f"{key}@{time.strftime('%Y-%m-%d')}",
            model=args.model,
            bias=round(bias, 6),
            weights={n: round(float(w), 6) for n, w in zip(names, weights, strict=True)},
            decide_at=decide_at,
            prompt_sha=prompt_sha(reader_name),
            fitted_on=f"Check-COVID {args.split}: {len(examples)} SUPPORT/REFUTE claims ({supports} SUPPORT)",
            settings={
                "exhibits": exhibits,
                "orders": orders,
                **{
                    k: v
                    for k, v in ((key, examples[0].settings.get(key, default)) for key, default in READER_SETTINGS.items())
                    if v is not None and (k != "contrast_share" or reader_name == "both")  # the share weighs only 'both'
                },
                "cross_validated": {k: round(v, 4) for k, v in cv.items()},
                "macro_f1_3_train": round(f1, 4),
            },
        )
        path = CALIBRATION_DIR / f"{key}.json"
        path.write_text(json.dumps(calibration.to_json(), indent=2) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
