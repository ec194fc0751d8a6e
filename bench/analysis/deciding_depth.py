"""The deciding abstract among the first k hybrid results (what desk's exhibits are), on a split's SUPPORT/REFUTE claims.

    .venv/bin/python bench/analysis/deciding_depth.py dev DATA_DIR

By document id; DATA_DIR is a data folder with the check-covid corpus indexed (it is indexed if not).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, when run as a file

from pipelines.core.config import AppSettings
from pipelines.eval.datasets import load_dataset
from pipelines.run.services import Services


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("split", help="the Check-COVID split: train or dev")
    parser.add_argument("data_dir", help="a data folder with the check-covid corpus indexed (it is indexed if not)")
    args = parser.parse_args()
    split, data_dir = args.split, Path(args.data_dir)
    settings = AppSettings(data_dir=data_dir)
    services = Services.create(settings)
    services.ensure_corpus("check-covid")
    ds = load_dataset("check-covid", split, checkcovid_dir=settings.checkcovid_dir)
    items = [i for i in ds.items if i.label != "NOT ENOUGH INFO" and i.gold_evidence]
    KS = (5, 10, 20, 25, 26, 27, 28, 29, 30, 40)
    found = {k: 0 for k in KS}
    for item in items:
        hits = services.index.search("check-covid", item.claim, k=max(KS), mode="hybrid")
        docs = [h.passage.doc_id for h in hits]
        gold = {g.doc_id for g in item.gold_evidence}
        for k in KS:
            found[k] += bool(gold & set(docs[:k]))
    print(split, len(items), "claims:", " ".join(f"@{k} {found[k] / len(items):.3f}" for k in KS))


if __name__ == "__main__":
    main()
