"""Paired bootstrap on train of the 5-fold cross-validated predictions: 'both' at 0.3 (net, gap, top) against the contrast
question alone and against the calibration it replaced (both at 0.15, net).

    .venv/bin/python bench/analysis/paired_bootstrap.py TRAIN_SEPARATE TRAIN_BOTH TRAIN_CONTRAST

The three data folders of the page's train runs (the readers page's separate run, this page's run read with both, the
contrast page's run).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, when run as a file
from bench import fit_desk_calibration as f
from pipelines.calibration import fitting
from pipelines.core.config import AppSettings
from pipelines.eval.datasets import load_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("separate", help="the readers page's train run (data folder), read with the separate questions")
    parser.add_argument("both", help="this page's train run (data folder), read with both")
    parser.add_argument("contrast", help="the contrast page's train run (data folder)")
    args = parser.parse_args()
    ds = load_dataset("check-covid", "train", checkcovid_dir=AppSettings().checkcovid_dir)
    gold = {}
    for i in ds.items:
        if i.label != "NOT ENOUGH INFO":
            gold.setdefault(" ".join(i.claim.split()), i.label)
    runs = [r for d in [args.separate, args.both] for r in f.examples_from_store(Path(d))]
    ex = [f.Example(c, gold[" ".join(c.split())], st, cfg) for c, st, cfg in runs if " ".join(c.split()) in gold and st]
    ex = [
        e
        for e in ex
        if not (
            e.settings.get("negation")
            and e.settings.get("reader", "separate") == "separate"
            and any(len(s.per_order) != 6 for s in e.stances)
        )
    ]
    both = [e for e in ex if e.settings.get("reader") == "both"]
    sep = [e for e in ex if e.settings.get("reader", "separate") == "separate"]
    pairs = f.pairs_from_both(both, 5) + f.pairs_from_folders(sep, Path(args.contrast), 5)
    u = {}
    for p in pairs:
        u.setdefault(" ".join(p[0].claim.split()), p)
    pairs = list(u.values())
    names = ("net", "gap", "top")

    def cvp(share, names):
        x, y = f.design(f.weigh_pairs(pairs, 5, share, names), names, 5, 99)
        return fitting.cross_validated(x, y), y

    def q(v):
        return f"{np.mean(v):+.3f} [{np.percentile(v, 5):+.3f}, {np.percentile(v, 95):+.3f}]"

    def ll(p, y):
        return -(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))

    configs = {"both .3 ngt": (0.3, names), "contrast ngt": (1.0, names), "both .15 net": (0.15, ("net",)), "both .3 net": (0.3, ("net",))}
    P = {k: cvp(*v) for k, v in configs.items()}
    y = P["both .3 ngt"][1]
    rng = np.random.default_rng(0)

    def sel(p, y, idx):
        conf = np.maximum(p[idx], 1 - p[idx])
        c = (p[idx] >= 0.5) == (y[idx] == 1)
        o = np.argsort(-conf, kind="stable")
        return c[o[: len(o) // 2]].mean()

    for a, b in (("both .3 ngt", "contrast ngt"), ("both .3 ngt", "both .15 net"), ("contrast ngt", "both .15 net")):
        pa, pb = P[a][0], P[b][0]
        dl, ds_, da = [], [], []
        for _ in range(2000):
            i = rng.integers(0, len(y), len(y))
            dl.append(ll(pa[i], y[i]).mean() - ll(pb[i], y[i]).mean())
            ds_.append(sel(pa, y, i) - sel(pb, y, i))
            da.append(((pa[i] >= 0.5) == (y[i] == 1)).mean() - ((pb[i] >= 0.5) == (y[i] == 1)).mean())
        print(f"{a} minus {b}: log loss {q(dl)}; accuracy {q(da)}; selective@50 {q(ds_)}")
    print(len(y), "claims")


if __name__ == "__main__":
    main()
