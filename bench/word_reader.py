"""The stance answered as a word, on desk's own exhibits: does it rank claims better than the contrast letters, and at what cost?

    .venv/bin/python bench/word_reader.py RECORDS.jsonl --out READINGS.jsonl [--backend embedded] [--limit N]
    .venv/bin/python bench/word_reader.py --readings READINGS.jsonl   # the table again, no model

``RECORDS`` is a records file of ``bench/desk.py --records`` run with the contrast question (desk's default), which
keeps each exhibit's text and its contrast reading. Each SUPPORTS/REFUTES claim's exhibits, exactly as desk read them,
are read again with ``bench/stance_question.py``'s ``words`` question (the passage, the statement, "supports,
contradicts or unrelated", in 2 orders of the words, read from the first answer token's probabilities), and each
exhibit's MiniLM likeness to the claim is computed (as ``desk.min_likeness`` computes it). On this model a letter's
probabilities are nearly flat, a word's are sharp, but the model never answers "unrelated": how much an exhibit bears
on the claim has to come from elsewhere, here from its likeness.

The claim scores compared, fixed before the first run (each is a ranking; AUC of SUPPORTS against REFUTES):
- ``desk``: desk's calibrated p(supported) from the contrast readings, as stored in the record;
- ``contrast mean``: the mean of p(supports) - p(refutes) over the exhibits, each weighed by 1 - p(unrelated);
- ``words mean``: the plain mean of p(supports) - p(contradicts) of the words readings;
- ``words by likeness``: the same weighed by max(0, likeness - 0.15) (the plain mean where every weight is 0);
- the first exhibit's p(supports) - p(refutes), each way;
- with ``--relevance`` (added after the first pass, not fixed beforehand): ``words by relevance``, the words' lean weighed
  by p(yes) of "Does the passage discuss what the statement is about?", asked after each exhibit's words readings.
Beside them, each variant's difference from ``desk`` (95% paired bootstrap over the claims) and the tokens the model
read a claim (prompt tokens computed after the server's cache, and tokens written): the words readings' as the server
reports them, desk's whole run's from the record (writing the claim's opposite, then the contrast readings).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk_rescore import read_records
from bench.json_lines import read_json_lines
from bench.stance_question import WORDS_SYSTEM, corpus_documents, paired_difference, read_variant
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.domain import Evidence
from pipelines.core.events import ModelCallCompleted
from pipelines.eval.metrics import auc
from pipelines.protocols.desk.settings import MIN_LIKENESS
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.run.tools.embeddings import default_embedder
from pipelines.stages.label_probability import estimate_label_probabilities
from pipelines.stages.stance import exhibit_line

BINARY = ("SUPPORTS", "REFUTES")


RELEVANCE_QUESTION = "Does the passage discuss what the statement is about? One word: yes or no."


async def read_relevance(llm: LLM, claim: str, exhibit: Evidence) -> float:
    """p(yes) that the passage discusses the statement's subject: the words question's opening word for word, then this
    question, so a reader asking both has the server read the passage once."""
    user = f"Passage:\n{exhibit_line(exhibit)}\n\nStatement: {' '.join(claim.split())}\n{RELEVANCE_QUESTION}"
    messages = [SystemMessage(WORDS_SYSTEM), HumanMessage(user)]
    read = await estimate_label_probabilities(llm, messages, ["yes", "no"], top_logprobs=10, max_tokens=1)
    return float(read.p("yes"))


def lean(p: dict[str, float]) -> float:
    """p(supports) - p(refutes) of one reading."""
    return float(p["SUPPORTS"] - p["REFUTES"])


def weighed(values: Sequence[float], weights: Sequence[float]) -> float:
    """The weighted mean; the plain mean where no weight is above 0."""
    total = float(sum(weights))
    if total <= 0:
        return float(np.mean(values)) if values else 0.0
    return float(sum(v * w for v, w in zip(values, weights, strict=True)) / total)


def scores(row: dict[str, Any]) -> dict[str, float]:
    """Every claim score this bench compares, from one claim's readings."""
    exhibits = row["exhibits"]
    contrast = [lean(e["contrast"]) for e in exhibits]
    words = [lean(e["words"]) for e in exhibits]
    return {
        "desk": float(row["p_supported"]),
        "contrast mean": weighed(contrast, [1 - e["contrast"]["UNRELATED"] for e in exhibits]),
        "words mean": weighed(words, [1.0] * len(words)),
        "words by likeness": weighed(words, [max(0.0, e["likeness"] - MIN_LIKENESS) for e in exhibits]),
        "contrast, first exhibit": contrast[0],
        "words, first exhibit": words[0],
        **({"words by relevance": weighed(words, [e["relevance"] for e in exhibits])} if all("relevance" in e for e in exhibits) else {}),
    }


def table(rows: list[dict[str, Any]]) -> str:
    y = [r["gold"] == "SUPPORTS" for r in rows]
    by_row = [scores(r) for r in rows]
    names = list(by_row[0])
    desk = [s["desk"] for s in by_row]
    lines = [
        f"{len(rows)} claims ({sum(y)} SUPPORTS), {np.mean([len(r['exhibits']) for r in rows]):.1f} exhibits a claim (mean)",
        "",
        "| claim score | AUC | against desk (95% paired bootstrap) |",
        "| --- | ---: | ---: |",
    ]
    for name in names:
        values = [s[name] for s in by_row]
        against = "" if name == "desk" else paired_difference(values, desk, y)
        lines.append(f"| {name} | {auc(values, y):.3f} | {against} |")
    words_tokens = np.median([r["tokens_read"]["words"] for r in rows])
    desk_tokens = np.median([r["tokens_read"]["contrast"] for r in rows])
    lines += [
        "",
        f"tokens read by the model a claim (median; prompt tokens computed and tokens written): desk's run {desk_tokens:.0f} "
        f"(the opposite written, the contrast readings), the words readings {words_tokens:.0f} ({words_tokens / desk_tokens:.2f}x)"
        + (f"; the relevance questions after them {relevance:.0f}" if (relevance := _relevance_tokens(rows)) is not None else ""),
        f"words: mean p(unrelated) {np.mean([e['words']['UNRELATED'] for r in rows for e in r['exhibits']]):.4f}; "
        f"contrast: {np.mean([e['contrast']['UNRELATED'] for r in rows for e in r['exhibits']]):.3f}",
    ]
    return "\n".join(lines)


def _relevance_tokens(rows: list[dict[str, Any]]) -> float | None:
    """The median tokens a claim's relevance questions read, where every claim asked them."""
    if not rows or not all(r["tokens_read"].get("relevance") for r in rows):
        return None
    return float(np.median([r["tokens_read"]["relevance"] for r in rows]))


async def collect(args: argparse.Namespace) -> list[dict[str, Any]]:
    settings = AppSettings(data_dir=Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="word-reader-")))
    documents = corpus_documents(args.corpus, settings)
    records = [r for path in args.records for r in read_records(path) if r["gold"] in BINARY and r.get("exhibits")]
    records = records[: args.limit] if args.limit else records
    done = {row["id"]: row for row in read_json_lines(args.out, missing_ok=True)} if args.out else {}
    calls: list[ModelCallCompleted] = []
    chat = build_chat_model(ModelSpec(backend=args.backend, logprobs=True, max_tokens=16), settings)
    llm = LLM(chat, role="judge", model_name="qwen", params={"temperature": 0.0}, on_call=calls.append)
    embedder = default_embedder()
    rows = []
    for record in records:
        if record["id"] in done:
            rows.append(done[record["id"]])
            continue
        claim = str(record["claim"])
        kept = [e for e in record["exhibits"] if e.get("text")]
        vectors = embedder.embed([claim, *[e["text"] for e in kept]])
        before = len(calls)
        relevance_tokens = 0
        exhibits = []
        for exhibit, vector in zip(kept, vectors[1:], strict=True):
            doc = documents.get(str(exhibit.get("doc_id")))
            evidence = Evidence(id=exhibit["id"], source="corpus", text=exhibit["text"], title=doc.title if doc else "")
            words = await read_variant(llm, "words", claim, evidence)
            read: dict[str, Any] = {
                "id": exhibit["id"],
                "doc_id": exhibit.get("doc_id"),
                "contrast": exhibit["probabilities"],
                "words": words,
                "likeness": round(float(vector @ vectors[0]), 4),
            }
            if args.relevance:
                asked = len(calls)
                read["relevance"] = round(await read_relevance(llm, claim, evidence), 4)
                relevance_tokens += sum(c.tokens_in - c.tokens_reused + c.tokens_out for c in calls[asked:])
            exhibits.append(read)
        row = {
            "id": record["id"],
            "gold": record["gold"],
            "p_supported": record["p_supported"],
            "exhibits": exhibits,
            "tokens_read": {
                "words": sum(c.tokens_in - c.tokens_reused + c.tokens_out for c in calls[before:]) - relevance_tokens,
                "relevance": relevance_tokens,
                "contrast": int(record["tokens_read"]),
            },
        }
        rows.append(row)
        if args.out:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
        print(f"  {row['id']} {row['gold']}: " + ", ".join(f"{k} {v:+.2f}" for k, v in scores(row).items()), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", type=Path, nargs="*", help="bench/desk.py records (contrast question) that keep the exhibits' text")
    parser.add_argument("--corpus", default="check-covid", help="where the exhibits' titles are looked up: check-covid or a JSONL corpus")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--relevance", action="store_true", help="also ask of each exhibit, after its words, whether it discusses the claim's subject"
    )
    parser.add_argument("--data-dir", default="")
    parser.add_argument("--out", type=Path, default=None, help="each claim's readings as JSON lines (resumable)")
    parser.add_argument("--readings", type=Path, default=None, help="print the table of an earlier run's --out file; no model calls")
    args = parser.parse_args()
    if args.readings is not None:
        print(table(read_json_lines(args.readings)))
        return
    if not args.records:
        parser.error("give records of bench/desk.py, or --readings")
    print(table(asyncio.run(collect(args))))


if __name__ == "__main__":
    main()
