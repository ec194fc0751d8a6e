"""Fool Me Twice (FM2) as two binary dev sets of encyclopedic claims, with Wikipedia's sentences as the corpus.

    .venv/bin/python bench/data/make_fm2.py /work/.mirror/google-research+fool-me-twice/repo /work/scratch/data2/fm2

FM2 (google-research/fool-me-twice, NAACL 2021) holds claims written by players of a game from a Wikipedia page,
each SUPPORTS or REFUTES, with the page's sentences that decide it (``gold_evidence``) and the ten or so sentences of
the same page a retriever found for it (``retrieved_evidence``), each under its section's heading. The claims were
written to fool other players: a refuted claim is a plausible change of a true one, on the page's own words.

Only FM2's ``dataset/dev.jsonl`` is read: its ``train.jsonl`` is over the size a fetched copy keeps, and its
``test.jsonl`` stays aside, unread, for a later check. Its 1,169 claims are split into **train** and **dev** by
Wikipedia page (so no page's claims fall on both sides): the pages, sorted and shuffled with ``random.Random(SEED)``,
go to train until it holds half the claims. The corpus is one document per (page, section) that any claim's evidence
comes from, holding every sentence FM2 gives of it (the gold and the retrieved ones of every claim of both halves),
so each claim's deciding sentences compete with the same page's other sentences and with every other page's.
A section's sentences keep the order in which the file first gives them, not Wikipedia's (FM2 gives sentences, not
pages), and are joined with blank lines so the app's sentence splitter cuts them where FM2 does: the claims'
``evidence`` sentence indices are the splitter's indices into the document.

Writes ``fm2_train_binary.jsonl``, ``fm2_dev_binary.jsonl``, ``corpus.jsonl`` and ``README.md`` (the source's commit,
the counts, this command) into the output folder. The data is for this machine only: never commit it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.data.mirror import commit_of, read_text
from corpora.base import Document, split_sentences
from corpora.chunking import chunk_document

REPOSITORY = "google-research/fool-me-twice"
SOURCE_FILE = "dataset/dev.jsonl"
SEED = 51  # the number: any fixed seed would do, this one is stated
LABELS = ("SUPPORTS", "REFUTES")
NAME = "fm2"


@dataclass
class Section:
    """One section of a Wikipedia page: the sentences FM2 gives of it, each as the app's splitter cuts it."""

    page: str
    heading: str
    sentences: list[str] = field(default_factory=list)  # FM2's sentences, in first-seen order, each once
    pieces: list[tuple[str, ...]] = field(default_factory=list)  # each sentence as split_sentences cuts it

    def add(self, sentence: str) -> None:
        if sentence not in self.sentences:
            self.sentences.append(sentence)
            self.pieces.append(split_sentences(sentence))

    def indices(self, sentence: str) -> list[int]:
        """The document's sentence indices that hold ``sentence`` (one, or more where the splitter cuts it)."""
        at = self.sentences.index(sentence)
        start = sum(len(p) for p in self.pieces[:at])
        return list(range(start, start + len(self.pieces[at])))

    @property
    def text(self) -> str:
        return "\n\n".join(s for s, p in zip(self.sentences, self.pieces, strict=True) if p)


@dataclass
class Built:
    train: list[dict[str, Any]]
    dev: list[dict[str, Any]]
    corpus: list[dict[str, Any]]
    passages: int
    left_out: Counter[str]


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def read_rows(text: str, where: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{where} line {number}: not JSON ({exc.msg})") from None
    return rows


def train_pages(rows: list[dict[str, Any]], seed: int = SEED) -> set[str]:
    """The pages whose claims go to train: sorted, shuffled with ``seed``, taken until train holds half the claims."""
    per_page = Counter(r["wikipedia_page"] for r in rows)
    pages = sorted(per_page)
    random.Random(seed).shuffle(pages)
    chosen: set[str] = set()
    taken = 0
    for page in pages:
        if taken >= len(rows) / 2:
            break
        chosen.add(page)
        taken += per_page[page]
    return chosen


def build(rows: list[dict[str, Any]], seed: int = SEED) -> Built:
    left_out: Counter[str] = Counter()
    kept = []
    for row in rows:
        if row.get("label") not in LABELS:
            left_out[f"label {row.get('label')!r}"] += 1
        elif not row.get("gold_evidence"):
            left_out["no gold evidence"] += 1
        else:
            kept.append(row)
    sections: dict[tuple[str, str], Section] = {}
    for row in kept:
        page = _clean(row["wikipedia_page"])
        for evidence in [*row.get("retrieved_evidence", []), *row["gold_evidence"]]:
            key = (page, _clean(evidence["section_header"]))
            sections.setdefault(key, Section(*key)).add(_clean(evidence["text"]))
    ids = {key: f"{NAME}-{n:04d}" for n, key in enumerate(sorted(sections))}
    corpus, passages = [], 0
    for key in sorted(sections):
        section = sections[key]
        text = section.text
        expected = tuple(piece for pieces in section.pieces for piece in pieces)
        if split_sentences(text) != expected:  # the gold indices rest on this
            raise SystemExit(f"{section.page} / {section.heading}: the splitter cuts the joined text differently from its sentences")
        url = "https://en.wikipedia.org/wiki/" + quote(section.page.replace(" ", "_"))
        title = f"{section.page} — {section.heading}"
        corpus.append({"id": ids[key], "title": title, "text": text, "url": url})
        passages += sum(1 for _ in chunk_document(Document(id=ids[key], title=title, sentences=expected)))
    chosen = train_pages(kept, seed)
    train: list[dict[str, Any]] = []
    dev: list[dict[str, Any]] = []
    for row in kept:
        page = _clean(row["wikipedia_page"])
        gold: dict[str, list[int]] = {}
        for evidence in row["gold_evidence"]:
            key = (page, _clean(evidence["section_header"]))
            gold.setdefault(ids[key], []).extend(sections[key].indices(_clean(evidence["text"])))
        if not any(gold.values()):
            left_out["gold evidence without text"] += 1
            continue
        claim = {
            "id": f"{NAME}-{row['id']}",
            "claim": _clean(row["text"]),
            "label": row["label"],
            "label_original": row["label"],
            "wikipedia_page": page,
            "category": row.get("category", ""),
            "evidence": [{"doc_id": doc, "sentences": sorted(set(s))} for doc, s in gold.items() if s],
        }
        (train if row["wikipedia_page"] in chosen else dev).append(claim)
    return Built(train, dev, corpus, passages, left_out)


def _counts(claims: list[dict[str, Any]]) -> str:
    labels = Counter(c["label"] for c in claims)
    pages = len({c["wikipedia_page"] for c in claims})
    return f"{len(claims):,} claims ({labels['SUPPORTS']:,} SUPPORTS, {labels['REFUTES']:,} REFUTES) from {pages} pages"


def readme(built: Built, source: Path, command: str) -> str:
    commit = commit_of(source)
    categories = Counter(c["category"] or "none" for c in built.train + built.dev)
    sentences = sum(len(split_sentences(d["text"])) for d in built.corpus)
    gold_docs = len({e["doc_id"] for c in built.train + built.dev for e in c["evidence"]})
    left = "; ".join(f"{n} left out ({why})" for why, n in sorted(built.left_out.items())) or "none left out"
    return f"""# Fool Me Twice (FM2), as two binary dev sets of encyclopedic claims

Source: {REPOSITORY} (commit {commit[:7]}, file `{SOURCE_FILE}`), the FM2 dataset of *Fool Me Twice: Entailment from
Wikipedia Gamification* (Eisenschlos et al., NAACL 2021). Licence: the repository is Apache-2.0 (its `LICENSE`, no
separate data licence); the evidence sentences are English Wikipedia's text (CC BY-SA), each document here keeps its
page's address. For use on this machine only; never committed to the project.

Claims were written by players of a game from one Wikipedia page, to fool other players: a refuted claim is a plausible
change of a true one, in the page's own words. Each has one or two gold sentences of its page and the ten or so
sentences of that page a retriever found for it.

- Only FM2's dev file is used: its train file is larger than a fetched copy keeps, and its test file (labels public)
  is left aside, unread, for a later check. The dev file's {len(built.train) + len(built.dev):,} claims are split by
  Wikipedia page (no page on both sides): pages sorted, shuffled with `random.Random({SEED})`, given to train until it
  holds half the claims; {left}.
- `fm2_train_binary.jsonl`: {_counts(built.train)}.
- `fm2_dev_binary.jsonl`: {_counts(built.dev)}.
  Fields: `id` (`fm2-` and FM2's id), `claim`, `label` (FM2's own, SUPPORTS or REFUTES), `label_original`,
  `wikipedia_page`, `category` ({", ".join(f"{k} {v}" for k, v in categories.most_common())}), and `evidence`: the
  document and sentence indices of the gold sentences ({gold_docs:,} documents hold some claim's gold sentence).
- `corpus.jsonl`: {len(built.corpus):,} documents, one per section of a page (`title` "Page — Section", `url` the
  page's address), {sentences:,} sentences, every sentence FM2 gives of that section for any claim of either file, so
  a claim's gold sentences compete with its own page's other sentences and with all other pages'; {built.passages:,}
  passages as the app chunks them. A section's sentences keep the order the file first gives them, not Wikipedia's,
  and are separated by blank lines so the app's splitter cuts them where FM2 does (the `evidence` indices are the
  splitter's). Ingest it as a corpus (`python -m pipelines ingest --corpus fm2 .../corpus.jsonl`) and evaluate with
  `python -m pipelines eval --dataset .../fm2_dev_binary.jsonl --corpus fm2 --labels binary`.

Built with:
```bash
{command}
```

What it measures: reading one or two encyclopedic sentences against a claim written to be hard to tell from its true
version (dates, numbers, who did what), where the deciding sentence sits among near-misses of its own page; short
passages, not abstracts or a fact-checker's reasoning. What it does not: search over the open web or a whole
encyclopedia (the corpus holds only sentences FM2's retriever or players picked, a few per section, out of order), NOT
ENOUGH INFO (every claim is decidable from its gold sentence), or claims as they circulate (these are game-written).
Tune on train, report on dev.
"""


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], epilog="The data written is for this machine only: never commit it."
    )
    parser.add_argument("source", type=Path, help=f"a copy of {REPOSITORY}: a checkout or its bare git directory (as fetched)")
    parser.add_argument("out", type=Path, help="the folder to write (created; its files are replaced)")
    args = parser.parse_args()
    rows = read_rows(read_text(args.source, SOURCE_FILE), SOURCE_FILE)
    built = build(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / f"{NAME}_train_binary.jsonl", built.train)
    write_jsonl(args.out / f"{NAME}_dev_binary.jsonl", built.dev)
    write_jsonl(args.out / "corpus.jsonl", built.corpus)
    command = f".venv/bin/python bench/data/make_fm2.py {args.source} {args.out}"
    (args.out / "README.md").write_text(readme(built, args.source, command), encoding="utf-8")
    print(f"train: {_counts(built.train)}\ndev: {_counts(built.dev)}\ncorpus: {len(built.corpus):,} documents, {built.passages:,} passages")


if __name__ == "__main__":
    main()
