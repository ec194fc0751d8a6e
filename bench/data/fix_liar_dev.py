"""LIAR-PLUS's two binary dev sets rebuilt with every statement paired with its own ruling (issue 51's data fault).

    .venv/bin/python bench/data/fix_liar_dev.py /work/.mirror/Tariq60+LIAR-PLUS/repo /work/scratch/data2/liar-plus-fixed \
        [--liar /work/.mirror/nishitpatel01+Fake_News_Detection/repo]

The fault: in LIAR-PLUS's ``test2`` (``dataset/jsonl/test2.jsonl``, as in ``dataset/tsv/test2.tsv``) the statements,
ids and labels are LIAR's test file line for line, but the justification column has 16 empty cells (``null``) inserted
in two runs (11 at row 703, 5 at row 934): from row 703 each ruling sits 11 rows below its statement, from row 923 16
rows below, and the last 16 statements' rulings are not in the file. ``../shared/data/liar-plus/`` took each row as it
stands, so about half of its dev claims name another statement's ruling. ``val2`` has no empty cell and is sound.

The repair: in each file, the null cells are dropped and the rulings left are paired with the statements in order;
statements left without a ruling (test2's last 16) are left out. A ruling that is blank text (a newline: the authors
found no ruling sentence) is a real cell and keeps its place. Everything else is built as the shared folder was:
``val2`` is **train** and ``test2`` **dev``; ``true``/``mostly-true`` are SUPPORTS, ``false``/``pants-fire`` REFUTES,
``half-true``/``barely-true`` left out of the claims but kept in the corpus as distractors; a claim without a ruling
is left out; each claim's ``evidence`` names its ruling document (sentence 0, as the shared folder does); the corpus
holds one document per statement with a ruling, titled by the speaker.

The script prints, for each file, how many statements share at least two content words (``content_words``: stemmed,
stop words out, numbers whole) with the ruling they are paired with, as the file stands and as repaired, by blocks of
rows. With ``--liar`` (a copy of a repository that holds LIAR's own ``liar_dataset/test.tsv``) it also checks that
test2's statement ids and labels are LIAR's, line for line. The data is for this machine only: never commit it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.data.mirror import commit_of, read_text
from pipelines.newsroom.matching import content_words

REPOSITORY = "Tariq60/LIAR-PLUS"
FILES = {"train": "dataset/jsonl/val2.jsonl", "dev": "dataset/jsonl/test2.jsonl"}
LIAR_TEST = "liar_dataset/test.tsv"
LABELS = {"true": "SUPPORTS", "mostly-true": "SUPPORTS", "false": "REFUTES", "pants-fire": "REFUTES"}
BLOCK = 100


@dataclass(frozen=True)
class Paired:
    """A file's statements, each with the ruling the file gives it and the one the repair gives it (None: no ruling)."""

    rows: list[dict[str, Any]]
    as_filed: list[str | None]
    repaired: list[str | None]
    inserted: list[int]  # the rows whose ruling cell is null


def pair(rows: list[dict[str, Any]]) -> Paired:
    """Drop the null ruling cells and pair the rulings left with the statements in order."""
    inserted = [i for i, row in enumerate(rows) if row.get("justification") is None]
    rulings = [row["justification"] for row in rows if row.get("justification") is not None]
    repaired: list[str | None] = [*rulings, *([None] * (len(rows) - len(rulings)))]
    return Paired(rows, [row.get("justification") for row in rows], repaired, inserted)


def shares_two(claim: str, ruling: str | None) -> bool:
    """The claim and the ruling share at least two content words."""
    return bool(ruling and ruling.strip()) and len(content_words(claim) & content_words(ruling or "")) >= 2


def agreement(rows: Sequence[dict[str, Any]], rulings: Sequence[str | None]) -> tuple[int, int]:
    """(statements sharing two content words with their ruling, statements with a ruling)."""
    ruled = [(r["claim"], j) for r, j in zip(rows, rulings, strict=True) if j and j.strip()]
    return sum(shares_two(c, j) for c, j in ruled), len(ruled)


def doc_id(split: str, row: dict[str, Any]) -> str:
    return f"liar-{split}-{str(row['json_file_id']).removesuffix('.json')}"


def build(split: str, paired: Paired) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The split's claims (binary labels, with a ruling) and its corpus documents (every statement with a ruling)."""
    claims, corpus = [], []
    for row, ruling in zip(paired.rows, paired.repaired, strict=True):
        if not (ruling and ruling.strip()):
            continue
        speaker = str(row.get("originator") or "")
        corpus.append(
            {"id": doc_id(split, row), "title": f"PolitiFact ruling on a statement by {speaker.replace('-', ' ')}", "text": ruling.strip()}
        )
        if row["label"] in LABELS:
            claims.append(
                {
                    "id": f"c-{split}-{str(row['json_file_id']).removesuffix('.json')}",
                    "claim": row["claim"],
                    "label": LABELS[row["label"]],
                    "label_original": row["label"],
                    "speaker": speaker,
                    "topics": row.get("topics") or [],
                    "evidence": [{"doc_id": doc_id(split, row), "sentences": [0]}],
                }
            )
    return claims, corpus


def check_against_liar(rows: list[dict[str, Any]], liar_tsv: str) -> str:
    """Whether test2's statement ids and labels are LIAR's test file's, line for line."""
    liar = [line.split("\t") for line in liar_tsv.split("\n") if line.strip()]
    ids = sum(a[0] == str(b["json_file_id"]) for a, b in zip(liar, rows, strict=False))
    labels = sum(a[1] == b["label"] for a, b in zip(liar, rows, strict=False))
    return f"LIAR's test file: {len(liar)} lines, test2: {len(rows)} rows; same statement id on {ids} lines, same label on {labels}"


def read_rows(source: Path, path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in read_text(source, path).split("\n") if line.strip()]


def report(split: str, paired: Paired, claims: list[dict[str, Any]]) -> list[str]:
    lines = [f"{split} ({FILES[split]}): {len(paired.rows)} rows, null ruling cells at rows {_runs(paired.inserted) or 'none'}"]
    for name, rulings in (("as filed", paired.as_filed), ("repaired", paired.repaired)):
        shared, ruled = agreement(paired.rows, rulings)
        blocks = " ".join(
            f"{start}:{agreement(paired.rows[start : start + BLOCK], rulings[start : start + BLOCK])[0]}"
            for start in range(0, len(paired.rows), BLOCK)
        )
        lines.append(f"  {name}: {shared}/{ruled} statements share >=2 content words with their ruling; by {BLOCK} rows: {blocks}")
    by_claim = {c["id"]: c for c in claims}
    ruling_of = dict(zip([f"c-{split}-{str(r['json_file_id']).removesuffix('.json')}" for r in paired.rows], paired.repaired, strict=True))
    shared = sum(shares_two(c["claim"], ruling_of[i]) for i, c in by_claim.items())
    lines.append(f"  binary claims written: {len(claims)}, of which {shared} share >=2 content words with their ruling")
    return lines


def _runs(indices: list[int]) -> str:
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def readme(source: Path, command: str, lines: list[str], counts: dict[str, str], liar_check: str, inserted: list[int]) -> str:
    commit = commit_of(source)
    measured = "\n".join(f"    {line}" for line in lines)
    check = f"\nChecked against LIAR itself: {liar_check}.\n" if liar_check else ""
    return f"""# LIAR-PLUS, as two binary dev sets of political claims, each statement with its own ruling

Source: {REPOSITORY} (commit {commit[:7]}; `{FILES["train"]}` as **train**, `{FILES["dev"]}` as **dev**; CC0 1.0 for the
dataset files, the statements and PolitiFact's ruling sentences keep their original copyright). Built as
`../shared/data/liar-plus/` was, except that dev's statements are paired with their own rulings: test2's ruling column
has {len(inserted)} null cells inserted (rows {_runs(inserted)}), each pushing every later ruling one row further below its
statement; the null cells are dropped and the rulings paired with the statements in order, and the last {len(inserted)}
statements, whose rulings are not in the file, are left out. val2 has no null cell: train is as in the shared folder.
For use on this machine only; never committed to the project.

- `liar_train_binary.jsonl`: {counts["train"]}.
- `liar_dev_binary.jsonl`: {counts["dev"]}.
  `true` and `mostly-true` are SUPPORTS, `false` and `pants-fire` REFUTES; `half-true` and `barely-true` are left out
  (`label_original` keeps PolitiFact's word). Each claim's `evidence` names its own ruling document.
- `corpus.jsonl`: {counts["corpus"]}: one document per statement's ruling sentences, for every statement of both files
  with a ruling (the left-out labels included, as distractors).
{check}
Built with:
```bash
{command}
```
which printed (content words: `pipelines.newsroom.matching.content_words`):

{measured}

What it is and is not: the evidence is a fact-checker's own reasoning about the statement, short and on topic, so it
measures reading, not search; a claim's deciding document is always in the corpus. Tune on train, report on dev.
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], epilog="The data written is for this machine only: never commit it."
    )
    parser.add_argument("source", type=Path, help=f"a copy of {REPOSITORY}: a checkout or its bare git directory (as fetched)")
    parser.add_argument("out", type=Path, help="the folder to write (created; its files are replaced)")
    parser.add_argument(
        "--liar", type=Path, help=f"a copy of a repository holding LIAR's own {LIAR_TEST}, to check test2's statements against"
    )
    args = parser.parse_args()
    lines: list[str] = []
    claims: dict[str, list[dict[str, Any]]] = {}
    corpus: list[dict[str, Any]] = []
    liar_check = ""
    inserted: list[int] = []
    for split, path in FILES.items():
        paired = pair(read_rows(args.source, path))
        claims[split], docs = build(split, paired)
        corpus += docs
        lines += report(split, paired, claims[split])
        if split == "dev" and args.liar:
            liar_check = f"{args.liar} at {commit_of(args.liar)[:7]}, {LIAR_TEST}: " + check_against_liar(
                paired.rows, read_text(args.liar, LIAR_TEST)
            )
        if split == "dev":
            inserted = paired.inserted
            lines.append(f"  {liar_check}")
    args.out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, rows in claims.items():
        (args.out / f"liar_{split}_binary.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        supports = sum(r["label"] == "SUPPORTS" for r in rows)
        counts[split] = f"{len(rows)} claims: {supports} SUPPORTS, {len(rows) - supports} REFUTES"
    (args.out / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    counts["corpus"] = f"{len(corpus):,} documents"
    liar = f" --liar {args.liar}" if args.liar else ""
    command = f".venv/bin/python bench/data/fix_liar_dev.py {args.source} {args.out}{liar}"
    (args.out / "README.md").write_text(readme(args.source, command, lines, counts, liar_check, inserted), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
