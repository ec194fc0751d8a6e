"""How alike to its claim (MiniLM cosine) the passage that decides it is, on two beats, and what a floor on it would set aside.

    .venv/bin/python bench/exhibit_likeness.py [--floors 0.1,0.15,0.2,0.25,0.3,0.4] [--liar-claims 400] [--write FILE]

No model calls. desk sets aside the exhibits further from the claim than ``desk.min_likeness``; this bench says
where a floor starts to cost deciding documents, and what it does to the verdicts:

- Check-COVID: the stored readings of desk's 25 exhibits (train: ``tokens-read-2026-11-24/train-contrast25-records``;
  dev: ``deep-exhibits-2026-11-24/dev25r``). Each exhibit's likeness is the claim's cosine with the nearest 3-sentence
  passage of its abstract (the records keep the document, not which passage). For each floor: the deciding documents kept
  (of those among the exhibits), the other exhibits kept, and on dev's 106 SUPPORT/REFUTE claims the verdict from the
  kept exhibits' stored stances (shipped calibration): binary accuracy, AUC, ECE and the verdicts that differ from reading all.
- LIAR-PLUS train (political claims, PolitiFact's rulings as the corpus): each claim's likeness to the nearest passage
  of its own ruling, the document that decides it, for the first ``--liar-claims`` claims in file order.

The default floor is the highest multiple of 0.05 that keeps at least 99% of the deciding documents of both train sets.
``--write FILE`` also writes the table the card reads when nothing found is near the claim
(``pipelines/calibration/data/deciding-likeness.json``): the first ``--liar-claims`` claims of each beat's train split,
each one's likeness to the nearest passage of the document that decides it.
Folders: ``DEBATEDESK_CHECKCOVID_DIR`` (default ../shared/data/check-covid) and ``--liar-dir`` (../shared/data/liar-plus).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reading_cut import read_records, shipped_calibration, stances_of
from corpora.base import Document, split_sentences
from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader
from pipelines.eval import metrics
from pipelines.run.tools.embeddings import Embedder, default_embedder
from pipelines.stages.stance_aggregation import aggregate

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs/measurements/data"
RECORDS = {
    "train": DATA / "tokens-read-2026-11-24/train-contrast25-records.jsonl.gz",
    "dev": DATA / "deep-exhibits-2026-11-24/dev25r.jsonl.gz",
}
KEEP = 0.99  # the share of deciding documents a default floor must keep on every train set


def nearest_passage(embedder: Embedder, claims: Sequence[str], docs_of_claims: Sequence[Sequence[Document]]) -> list[list[float]]:
    """For each claim, its cosine with the nearest 3-sentence passage of each of its documents."""
    vectors = embedder.embed(list(claims))
    out = []
    for claim_vector, docs in zip(vectors, docs_of_claims, strict=True):
        row = []
        for doc in docs:
            passages = [p.text for p in chunk_documents([doc])] or [doc.title]
            row.append(float((embedder.embed(passages) @ claim_vector).max()))
        out.append(row)
    return out


def check_covid(embedder: Embedder, folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each split's records with every first-round exhibit's likeness and whether it is the deciding document."""
    docs = {d.id: d for d in CheckCovidLoader(folder).load_documents()}
    deciding = {}
    for split in ("train", "dev"):
        for line in (folder / f"covidCheck_{split}_composed.json").read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                deciding[row["id"]] = row["cord_id"]
    passages = {doc_id: [p.text for p in chunk_documents([doc])] for doc_id, doc in docs.items()}
    flat = [(doc_id, text) for doc_id, texts in passages.items() for text in texts]
    vectors = embedder.embed([text for _, text in flat])
    rows_of: dict[str, list[int]] = {}
    for i, (doc_id, _) in enumerate(flat):
        rows_of.setdefault(doc_id, []).append(i)
    out: dict[str, list[dict[str, Any]]] = {}
    for split, path in RECORDS.items():
        records = read_records(path)
        claims = embedder.embed([r["claim"] for r in records])
        for record, claim in zip(records, claims, strict=True):
            record["likeness"] = {
                e["id"]: float((vectors[rows_of[e["doc_id"]]] @ claim).max()) for e in record["exhibits"] if e.get("round", 1) == 1
            }
            record["deciding_doc"] = deciding.get(record["id"], "")
        out[split] = records
    return out


def liar_plus(embedder: Embedder, folder: Path, limit: int) -> list[float]:
    """The first ``limit`` LIAR-PLUS train claims' likeness to their own ruling (its nearest passage)."""
    corpus = {}
    for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            corpus[row["id"]] = Document(id=row["id"], title=row["title"], sentences=split_sentences(row["text"]), source="LIAR-PLUS")
    rows = [json.loads(line) for line in (folder / "liar_train_binary.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["evidence"] and r["evidence"][0]["doc_id"] in corpus][:limit]
    likeness = nearest_passage(embedder, [r["claim"] for r in rows], [[corpus[r["evidence"][0]["doc_id"]]] for r in rows])
    return [row[0] for row in likeness]


def check_covid_own(embedder: Embedder, folder: Path, limit: int) -> list[float]:
    """The first ``limit`` Check-COVID train claims' likeness to their own abstract (its nearest passage)."""
    docs = {d.id: d for d in CheckCovidLoader(folder).load_documents()}
    lines = (folder / "covidCheck_train_composed.json").read_text(encoding="utf-8").splitlines()
    rows = [r for r in (json.loads(line) for line in lines if line.strip()) if r["cord_id"] in docs][:limit]
    return [row[0] for row in nearest_passage(embedder, [r["claim"] for r in rows], [[docs[r["cord_id"]]] for r in rows])]


def write_table(path: Path, beats: dict[str, list[float]]) -> None:
    """The shipped table the card reads (pipelines/calibration/likeness.py): each beat's likenesses, sorted."""
    table = {
        "measured": "2026-12-05 by bench/exhibit_likeness.py: each train claim's MiniLM cosine with the nearest passage of the document that decides it",
        "beats": {name: sorted(round(x, 3) for x in values) for name, values in beats.items()},
    }
    path.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


def floor_rows(records: Sequence[dict[str, Any]], floor: float) -> dict[str, Any]:
    """What a floor keeps of one split's exhibits."""
    deciding = [x for r in records for e, x in r["likeness"].items() if _doc(r, e) == r["deciding_doc"]]
    others = [x for r in records for e, x in r["likeness"].items() if _doc(r, e) != r["deciding_doc"]]
    return {
        "deciding kept": f"{sum(x >= floor for x in deciding)} of {len(deciding)}",
        "deciding share": sum(x >= floor for x in deciding) / len(deciding),
        "others kept": sum(x >= floor for x in others) / len(others),
        "exhibits kept": (sum(x >= floor for x in deciding) + sum(x >= floor for x in others)) / (len(deciding) + len(others)),
    }


def _doc(record: dict[str, Any], exhibit_id: str) -> str:
    return next(e["doc_id"] for e in record["exhibits"] if e["id"] == exhibit_id)


def verdicts(records: Sequence[dict[str, Any]], floor: float) -> dict[str, float]:
    """dev's SUPPORT/REFUTE claims ruled from the kept exhibits' stored stances, beside reading all."""
    calibration = shipped_calibration("qwen2.5-coder-1.5b-instruct-q4_k_m", "contrast")
    sided = [r for r in records if r["gold"] in ("SUPPORTS", "REFUTES") and r.get("exhibits")]
    q, differ = [], 0
    for record in sided:
        stances = stances_of(record)
        kept = [s for s in stances if record["likeness"].get(s.exhibit_id, 1.0) >= floor]
        full, cut = aggregate(stances, calibration), aggregate(kept, calibration)
        differ += full.label != cut.label
        q.append(cut.calibrated)
    gold = [r["gold"] == "SUPPORTS" for r in sided]
    correct = [(p >= 0.5) == g for p, g in zip(q, gold, strict=True)]
    return {
        "claims": len(sided),
        "verdicts that differ": differ,
        "binary accuracy": sum(correct) / len(correct),
        "AUC": metrics.auc(q, gold),
        "ECE": metrics.expected_calibration_error([max(p, 1 - p) for p in q], correct, 10) or 0.0,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floors", default="0,0.1,0.15,0.2,0.25,0.3,0.4", help="the floors compared, comma-separated")
    parser.add_argument("--liar-claims", type=int, default=400, help="LIAR-PLUS train claims, in file order")
    parser.add_argument("--liar-dir", type=Path, default=ROOT.parent / "shared/data/liar-plus")
    parser.add_argument(
        "--write", type=Path, help="also write the table the card reads (pipelines/calibration/data/deciding-likeness.json)"
    )
    args = parser.parse_args(argv)
    floors = [float(f) for f in args.floors.split(",")]
    embedder = default_embedder()
    covid = check_covid(embedder, Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", ROOT.parent / "shared/data/check-covid")))
    liar = liar_plus(embedder, args.liar_dir, args.liar_claims)
    if args.write:
        covid_folder = Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", ROOT.parent / "shared/data/check-covid"))
        own = check_covid_own(embedder, covid_folder, args.liar_claims)
        write_table(args.write, {"COVID-19 claims (Check-COVID train)": own, "political claims (LIAR-PLUS train)": liar})
        print(f"wrote {args.write}: Check-COVID train, {len(own)} claims, median {statistics.median(own):.3f}")
    print(f"LIAR-PLUS train, {len(liar)} claims: likeness to their own ruling, median {statistics.median(liar):.3f}")
    header = "| floor | Check-COVID train: deciding kept | others kept | LIAR-PLUS train: deciding kept | dev: deciding kept | exhibits kept | verdicts that differ | accuracy | AUC | ECE |"
    print(header)
    print("| " + " | ".join("---:" for _ in header.strip("|").split("|")) + " |")
    best = 0.0
    for floor in floors:
        train, dev = floor_rows(covid["train"], floor), floor_rows(covid["dev"], floor)
        liar_share = sum(x >= floor for x in liar) / len(liar)
        ruled = verdicts(covid["dev"], floor)
        if train["deciding share"] >= KEEP and liar_share >= KEEP and round(floor / 0.05, 6).is_integer():
            best = max(best, floor)
        print(
            f"| {floor:.2f} | {train['deciding kept']} | {train['others kept']:.3f} | {liar_share:.3f} | {dev['deciding kept']} | "
            f"{dev['exhibits kept']:.3f} | {ruled['verdicts that differ']} of {ruled['claims']} | {ruled['binary accuracy']:.3f} | "
            f"{ruled['AUC']:.3f} | {ruled['ECE']:.3f} |"
        )
    print(f"highest multiple of 0.05 keeping {KEEP:.0%} of the deciding documents of both train sets: {best:.2f}")


if __name__ == "__main__":
    main()
