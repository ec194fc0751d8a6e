"""The stance question alone: how well each way of asking reads the deciding exhibit, on claims of one beat.

    .venv/bin/python bench/stance_question.py RECORDS --dataset DATASET [--split train] [--limit 60]
        [--variants contrast,verdict,true_false] [--backend embedded] [--out READINGS.jsonl]
    .venv/bin/python bench/stance_question.py --dataset DATASET --corpus CORPUS [--split train] [--limit 100] ...
    .venv/bin/python bench/stance_question.py --readings READINGS.jsonl [--variants ...]   # the table again, no model

Isolates the stance question from retrieval and aggregation (``bench/reading_failures.py``
shows the stance question is where desk fails on LIAR-PLUS): for each SUPPORTS/REFUTES claim
of a records file of ``bench/desk.py --records`` (which keeps each exhibit's text), the exhibit
from the claim's deciding document is read once per variant, in each order of its answers,
and the variants are compared on the same exhibits in one run: the AUC of the log-odds of
SUPPORTS against REFUTES, the mean log-odds for each label, the probability that the exhibit
addresses the claim, and the calls and prompt tokens each spent.

With ``--corpus`` instead of records (``check-covid``, or the JSONL corpus file the dataset's
evidence points into), no desk run is needed: the claims are the bench's seeded, label-balanced
sample of the dataset (``--limit`` of them, as ``bench/desk.py`` picks), and each claim's exhibit
is the passage of its deciding document (cut as ingestion cuts it) that MiniLM ranks closest to
the claim, which is where desk's retrieval puts it first on these beats. This reads 100+ claims
of a beat for the cost of the readings alone.

Variants:
- ``contrast``: desk's question today (``desk_contrast``): the claim against its opposite, or
  neither; the opposite stated plainly ("It is not true that ..."), not written by the model.
- ``verdict``: a fact-checker's question: is the statement accurate, inaccurate, or does the
  passage not say, with the passage framed as evidence a fact-checker gathered (desk's ``verdict``
  reader since 2026-12-03, ``desk_verdict``).
- ``true_false``: the statement first, then the passage: true, false, or the passage does not say.
- ``words``: the passage, the statement, and the stance answered as a word (supports, contradicts or unrelated) rather
  than a letter: on this model a letter's probabilities are nearly flat (an easy case read 0.42 / 0.30 / 0.27), a
  word's first token is sharper.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk_rescore import read_records
from bench.reading_failures import log_odds
from corpora.base import Document
from corpora.chunking import chunk_document
from corpora.loaders import CheckCovidLoader, FileLoader
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.domain import Evidence
from pipelines.core.events import ModelCallCompleted
from pipelines.eval.datasets import Dataset, load_dataset
from pipelines.eval.harness import select_items
from pipelines.eval.metrics import auc
from pipelines.protocols.desk.settings import StanceReader
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.run.tools.embeddings import Embedder, default_embedder
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.stance import LETTERS, exhibit_line, plain_negation, read_stance

BINARY = ("SUPPORTS", "REFUTES")
ORDERS = (("SUPPORTS", "REFUTES", "UNRELATED"), ("REFUTES", "SUPPORTS", "UNRELATED"))

TRUE_FALSE_SYSTEM = "Decide whether a statement is true or false from the passage given. Answer with one letter."
TRUE_FALSE_WORDS = {"SUPPORTS": "True.", "REFUTES": "False.", "UNRELATED": "The passage does not say."}


def _lettered(words: dict[str, str], order: Sequence[str]) -> str:
    return "\n".join([*(f"{letter}. {words[s]}" for letter, s in zip(LETTERS, order, strict=True)), options_line(LETTERS)])


def true_false_messages(claim: str, exhibit: Evidence, order: Sequence[str]) -> list[BaseMessage]:
    user = f"Statement: {' '.join(claim.split())}\nPassage:\n{exhibit_line(exhibit)}\nIs the statement true or false?\n{_lettered(TRUE_FALSE_WORDS, order)}"
    return [SystemMessage(TRUE_FALSE_SYSTEM), HumanMessage(user)]


WORDS = {"SUPPORTS": "supports", "REFUTES": "contradicts", "UNRELATED": "unrelated"}
WORDS_SYSTEM = "You compare a statement with a passage of evidence and say how the passage bears on it. Answer with one word."


def words_messages(claim: str, exhibit: Evidence, order: Sequence[str]) -> list[BaseMessage]:
    """The stance named as a word (supports, contradicts, unrelated), listed in ``order``, read from the first token's probabilities."""
    listed = ", ".join(WORDS[s] for s in order[:-1]) + f" or {WORDS[order[-1]]}"
    user = f"Passage:\n{exhibit_line(exhibit)}\n\nStatement: {' '.join(claim.split())}\nHow does the passage bear on the statement? One word: {listed}."
    return [SystemMessage(WORDS_SYSTEM), HumanMessage(user)]


ASKED: dict[str, Callable[[str, Evidence, Sequence[str]], list[BaseMessage]]] = {
    "true_false": true_false_messages,
    "words": words_messages,
}
ANSWERS: dict[str, dict[str, str]] = {"words": WORDS}  # a variant answered in words, not letters
DESK_READERS: dict[str, StanceReader] = {"contrast": "contrast", "verdict": "verdict"}  # asked as desk asks them (stages/stance.py)


async def read_variant(llm: LLM, variant: str, claim: str, exhibit: Evidence) -> dict[str, float]:
    """The exhibit's stance (SUPPORTS, REFUTES, UNRELATED) as ``variant`` asks it, averaged over the answer orders."""
    if variant in DESK_READERS:
        stance = await read_stance(
            llm, claim, exhibit, orders=2, negation=plain_negation(claim), reader=DESK_READERS[variant], top_logprobs=10
        )
        return {k: float(v) for k, v in stance.probabilities.items()}
    per_order = []
    for order in ORDERS:
        answers = [ANSWERS[variant][s] for s in order] if variant in ANSWERS else list(LETTERS)
        read = await estimate_label_probabilities(llm, ASKED[variant](claim, exhibit, order), answers, top_logprobs=10, max_tokens=1)
        per_order.append({s: read.p(answer) for answer, s in zip(answers, order, strict=True)})
    return {s: sum(p[s] for p in per_order) / len(per_order) for s in ORDERS[0]}


def deciding_exhibits(records: list[dict[str, Any]], deciding: dict[str, set[str]], limit: int) -> list[tuple[dict[str, Any], Evidence]]:
    """Each SUPPORTS/REFUTES record's first exhibit from a deciding document, with its text (records without one left out)."""
    found = []
    for record in records:
        if record["gold"] not in BINARY:
            continue
        for exhibit in record["exhibits"]:
            if exhibit.get("doc_id") in deciding.get(str(record["id"]), set()) and exhibit.get("text"):
                found.append(
                    (
                        record,
                        Evidence(id="E1", source="corpus", text=exhibit["text"], title=exhibit.get("title", ""), doc_id=exhibit["doc_id"]),
                    )
                )
                break
    return found[:limit] if limit else found


def corpus_documents(corpus: str, settings: AppSettings) -> dict[str, Document]:
    """``check-covid`` (the folder in settings) or a JSONL corpus file, by document id."""
    loader = CheckCovidLoader(settings.checkcovid_dir) if corpus == "check-covid" else FileLoader([Path(corpus)])
    return {doc.id: doc for doc in loader.load_documents()}


def closest_passages(
    dataset: Dataset, documents: dict[str, Document], embedder: Embedder, limit: int
) -> list[tuple[dict[str, Any], Evidence]]:
    """The sampled SUPPORTS/REFUTES claims, each with its deciding documents' passage closest to it (claims whose documents are missing left out)."""
    found = []
    for item in select_items(dataset, "binary", limit or None, seed=0).items:
        docs = [documents[d] for d in dict.fromkeys(g.doc_id for g in item.gold_evidence) if d in documents]
        passages = [p for doc in docs for p in chunk_document(doc)]
        if item.label not in BINARY or not passages:
            continue
        similarity = embedder.embed([item.claim]) @ embedder.embed([p.indexed_text for p in passages]).T
        best = passages[int(np.argmax(similarity[0]))]
        record = {"id": item.id, "gold": item.label, "claim": item.claim}
        found.append((record, Evidence(id="E1", source="corpus", text=best.text, title=best.title, doc_id=best.doc_id)))
    return found


async def collect(args: argparse.Namespace, variants: list[str]) -> list[dict[str, Any]]:
    settings = AppSettings(data_dir=Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="stance-question-")))
    dataset = load_dataset(args.dataset, args.split, checkcovid_dir=settings.checkcovid_dir)
    if args.corpus:
        exhibits = closest_passages(dataset, corpus_documents(args.corpus, settings), default_embedder(), args.limit)
    else:
        deciding = {item.id: {g.doc_id for g in item.gold_evidence} for item in dataset.items}
        exhibits = deciding_exhibits([r for path in args.records for r in read_records(path)], deciding, args.limit)
    calls: list[ModelCallCompleted] = []
    chat = build_chat_model(ModelSpec(backend=args.backend, logprobs=True, max_tokens=16), settings)
    llm = LLM(chat, role="judge", model_name="qwen", params={"temperature": 0.0}, on_call=calls.append)
    rows = []
    for record, exhibit in exhibits:
        row: dict[str, Any] = {"id": record["id"], "gold": record["gold"], "calls": {}, "fresh_tokens": {}, "doc_id": exhibit.doc_id}
        for variant in variants:
            before = len(calls)
            row[variant] = await read_variant(llm, variant, record["claim"], exhibit)
            row["calls"][variant] = len(calls) - before
            row["fresh_tokens"][variant] = sum(c.tokens_in - c.tokens_reused for c in calls[before:])
        rows.append(row)
        print(
            f"  {record['id']} {record['gold']}: " + ", ".join(f"{v} {log_odds(row[v]):+.2f}" for v in variants),
            file=sys.stderr,
            flush=True,
        )
    return rows


def paired_difference(a: Sequence[float], b: Sequence[float], y: Sequence[bool], resamples: int = 2000, seed: int = 51) -> str:
    """AUC(a) - AUC(b) on the same claims, with the 2.5th and 97.5th percentiles of the difference over resampled claims."""
    rng = np.random.default_rng(seed)
    xa, xb, t = np.asarray(a), np.asarray(b), np.asarray(y)
    spread = []
    for _ in range(resamples):
        pick = rng.integers(0, len(t), len(t))
        if t[pick].all() or not t[pick].any():
            continue  # a resample with one label has no AUC
        spread.append(auc(list(xa[pick]), list(t[pick])) - auc(list(xb[pick]), list(t[pick])))
    low, high = np.percentile(spread, [2.5, 97.5]) if spread else (float("nan"), float("nan"))
    return f"{auc(list(xa), list(t)) - auc(list(xb), list(t)):+.3f} ({low:+.3f} to {high:+.3f})"


def table(rows: list[dict[str, Any]], variants: list[str]) -> str:
    y = [r["gold"] == "SUPPORTS" for r in rows]
    lines = [
        f"{len(rows)} claims ({sum(y)} SUPPORTS), the deciding exhibit read by each variant",
        "",
        "| variant | AUC | AUC against the first variant (95% paired bootstrap) | log-odds S:R, SUPPORTS claims | REFUTES claims "
        "| p(addresses) | side right (against the median lean) | calls / fresh tokens a claim |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    first = [log_odds(r[variants[0]]) for r in rows]
    for v in variants:
        odds = [log_odds(r[v]) for r in rows]
        sup = np.mean([o for o, t in zip(odds, y, strict=True) if t])
        ref = np.mean([o for o, t in zip(odds, y, strict=True) if not t])
        addressed = np.mean([1 - r[v]["UNRELATED"] for r in rows])
        centred = np.array(odds) - np.median(odds)  # the side, against the beat's own median lean (no labels used)
        right = np.mean([(c > 0) == t for c, t in zip(centred, y, strict=True)])
        cost = f"{np.mean([r['calls'][v] for r in rows]):.1f} / {np.median([r['fresh_tokens'][v] for r in rows]):.0f}"
        against = "" if v == variants[0] else paired_difference(odds, first, y)
        lines.append(f"| {v} | {auc(odds, y):.3f} | {against} | {sup:+.3f} | {ref:+.3f} | {addressed:.3f} | {right:.3f} | {cost} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path, nargs="*", help="bench/desk.py records that keep the exhibits' text")
    parser.add_argument(
        "--corpus", default="", help="instead of records: check-covid, or the JSONL corpus file the dataset's evidence points into"
    )
    parser.add_argument("--dataset", default="", help="check-covid, or the JSONL file of claims the records were read from")
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--variants", default="contrast,verdict,true_false")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--data-dir", default="")
    parser.add_argument("--out", type=Path, default=None, help="write each claim's readings as JSON lines")
    parser.add_argument("--readings", type=Path, default=None, help="print the table of an earlier run's --out file; no model calls")
    args = parser.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.readings is not None:
        print(table([json.loads(line) for line in args.readings.read_text().splitlines() if line.strip()], variants))
        return
    if not args.dataset:
        parser.error("--dataset is needed to read claims (check-covid, or a JSONL file of claims)")
    if bool(args.records) == bool(args.corpus):
        parser.error("give records of bench/desk.py, or --corpus (not both)")
    unknown = [v for v in variants if v not in DESK_READERS and v not in ASKED]
    if unknown:
        parser.error(f"unknown variants: {', '.join(unknown)} (known: {', '.join([*DESK_READERS, *ASKED])})")
    rows = asyncio.run(collect(args, variants))
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(table(rows, variants))


if __name__ == "__main__":
    main()
