"""desk's stance readers side by side, on Check-COVID claims with the gold passage in hand (no retrieval).

    .venv/bin/python bench/desk_readers.py [--split train] [--limit 80] [--out FILE.jsonl]
    .venv/bin/python bench/desk_readers.py --analyse FILE.jsonl

Each SUPPORT/REFUTE claim is read against its gold sentence with one sentence either side
(about one passage of the index), by each reader:

- ``plain``: the shipped stance prompt, 3 option orders;
- ``neutral``: the same without its "details matter: a different number ... contradicts" line;
- ``shots``: 3 worked examples from train before the question (``desk.shots=3``);
- ``prior``: the plain reading divided by the model's reading of an empty passage
  (contextual calibration, Zhao et al. 2021);
- ``negation``: the plain reading averaged with the claim's opposite read the other way
  round (``desk.negation``);
- ``sentence``: the abstract's sentence closest to the claim (MiniLM) read alone;
- ``truefalse``: another question, "according to the passage, is the claim true?" (true /
  false / not stated), the claim and its opposite;
- ``passage_first``: the shipped question with the passage before the claim (so the claim
  and its opposite would share the passage as a prefix the server reuses);
- ``quotes``: the passage's 2 sentences closest to the claim (what desk quotes), the claim and
  its opposite;
- ``contrast``: one question for both: "which statement does the passage support?", the claim
  and its opposite as answers A and B (swapped in the second order), "neither" as C
  (``desk.reader=contrast``); and the same with the two statements before the passage.

``--readers`` picks which are collected (the separate reader, the claim and its opposite, always is).

One JSON line per claim keeps every order's probabilities, so ``--analyse`` compares the
readers and their mixtures offline: AUC of p(supports) - p(contradicts) between SUPPORT and
REFUTE claims, leave-one-out accuracy at the best threshold, the mean stance, and how often
the orders agreed. Tune on train; the claims are a seeded shuffle of the split.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from corpora.base import split_sentences
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.domain import Evidence
from pipelines.eval import metrics
from pipelines.eval.datasets import load_dataset
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.run.tools.embeddings import MiniLMEmbedder
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.stance import (
    LETTERS,
    STANCES,
    SWAPPED,
    StanceKey,
    contrast_options_block,
    exhibit_line,
    negate,
    option_orders,
    options_block,
    read_stance,
)

Reading = Sequence[Mapping[str, float]]
TRUEFALSE_SYSTEM = (
    "You check a claim against one passage of evidence. Say whether, according to the passage, the claim is true, false, "
    "or not stated. Answer with one letter."
)
TRUEFALSE_OPTIONS: dict[StanceKey, str] = {
    "SUPPORTS": "True: the passage says so.",
    "REFUTES": "False: the passage says otherwise.",
    "UNRELATED": "Not stated: the passage does not say.",
}
OLD_READERS = ("neutral", "shots", "prior", "sentence")
NEW_READERS = ("truefalse", "passage_first", "quotes", "contrast")

DETAILS_LINE = " Details matter: a passage that gives a different number, time, direction or group than the claim contradicts it."


class WithoutDetailsLine:
    """The judge's LLM with the stance prompt's "details matter" line taken out of the system message."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.model_name = llm.model_name

    async def reply(self, messages: list[BaseMessage], **params: Any) -> Any:
        first = messages[0]
        if isinstance(first, SystemMessage):
            messages = [SystemMessage(content=str(first.content).replace(DETAILS_LINE, "")), *messages[1:]]
        return await self.llm.reply(messages, **params)


def corpus_by_id(folder: Path) -> dict[str, dict[str, Any]]:
    with (folder / "corpus.json").open() as f:
        return {d["cord_id"]: d for d in map(json.loads, f)}


def passage(doc: dict[str, Any], sentence: int) -> Evidence:
    sentences = doc["abstract"]
    j = min(sentence, len(sentences) - 1)
    return Evidence(id="E1", source="corpus", title=doc["title"], text=" ".join(sentences[max(0, j - 1) : j + 2]))


async def read_frame(
    llm: LLM, ask: Callable[[str, Sequence[StanceKey]], list[BaseMessage]], claim: str, negation: str
) -> list[dict[str, float]]:
    """One question asked of the claim and of its opposite in 3 option orders; the opposite's readings swapped back."""
    readings: list[dict[str, float]] = []
    for statement, swapped in ((claim, False), (negation, True)):
        for order in option_orders(3):
            read = await estimate_label_probabilities(llm, ask(statement, order), LETTERS, max_tokens=1)
            reading: dict[str, float] = {(SWAPPED[s] if swapped else s): read.p(k) for k, s in zip(LETTERS, order, strict=True)}
            readings.append(reading)
    return readings


def truefalse_question(line: str) -> Callable[[str, Sequence[StanceKey]], list[BaseMessage]]:
    def ask(claim: str, order: Sequence[StanceKey]) -> list[BaseMessage]:
        options = "\n".join([*(f"{k}. {TRUEFALSE_OPTIONS[s]}" for k, s in zip(LETTERS, order, strict=True)), options_line(LETTERS)])
        question = f"Claim: {claim}\n\nPassage:\n{line}\n\nAccording to the passage, is the claim true?\n{options}"
        return [SystemMessage(content=TRUEFALSE_SYSTEM), HumanMessage(content=question)]

    return ask


def passage_first_question(line: str) -> Callable[[str, Sequence[StanceKey]], list[BaseMessage]]:
    system = load_prompt("desk_stance").render(claim="", exhibit="", arguments="", options="")[0]

    def ask(claim: str, order: Sequence[StanceKey]) -> list[BaseMessage]:
        question = f"Passage:\n{line}\n\nClaim: {claim}\n\nWhat does the passage say about the claim?\n{options_block(order)}"
        return [system, HumanMessage(content=question)]

    return ask


async def statements_first(llm: LLM, line: str, claim: str, negation: str) -> list[dict[str, float]]:
    """The contrast question with the two statements before the passage (the shipped one puts the passage first)."""
    system = SystemMessage(content=load_prompt("desk_contrast").system.strip())
    readings: list[dict[str, float]] = []
    for order in option_orders(2, "contrast"):
        options = contrast_options_block(order, claim, negation)
        first, second = options.splitlines()[:2]
        question = f"Statements:\n{first}\n{second}\n\nPassage:\n{line}\n\nWhich statement does the passage support?\n{options}"
        read = await estimate_label_probabilities(llm, [system, HumanMessage(content=question)], LETTERS, max_tokens=1)
        readings.append({s: read.p(k) for k, s in zip(LETTERS, order, strict=True)})
    return readings


async def read_claim(llm: LLM, embedder: MiniLMEmbedder, item: Any, doc: dict[str, Any], readers: Sequence[str]) -> dict[str, Any]:
    gold = item.gold_evidence[0]
    exhibit = passage(doc, gold.sentence)
    record: dict[str, Any] = {"id": item.id, "claim": item.claim, "label": item.label}
    record["negation"], _ = await negate(llm, item.claim)
    both = await read_stance(llm, item.claim, exhibit, negation=record["negation"])  # the claim's orders, then the opposite's
    record["plain"] = list(both.per_order[: both.opposite_from])
    record["opposite"] = list(both.per_order[both.opposite_from :])
    if "neutral" in readers:
        record["neutral"] = list((await read_stance(WithoutDetailsLine(llm), item.claim, exhibit)).per_order)  # type: ignore[arg-type]
    if "shots" in readers:
        record["shots"] = list((await read_stance(llm, item.claim, exhibit, shots=3)).per_order)
    if "prior" in readers:
        empty = Evidence(id="E1", source="corpus", title="", text="N/A")
        record["prior"] = list((await read_stance(llm, item.claim, empty)).per_order)
    if "sentence" in readers:
        vectors = embedder.embed([item.claim, *doc["abstract"]])
        best = int(np.argmax(vectors[1:] @ vectors[0]))
        one = Evidence(id="E1", source="corpus", title=doc["title"], text=doc["abstract"][best])
        record["sentence"] = list((await read_stance(llm, item.claim, one)).per_order)
    line = exhibit_line(exhibit)
    if "truefalse" in readers:
        record["truefalse"] = await read_frame(llm, truefalse_question(line), item.claim, record["negation"])
    if "passage_first" in readers:
        record["passage_first"] = await read_frame(llm, passage_first_question(line), item.claim, record["negation"])
    if "quotes" in readers:
        sentences = split_sentences(exhibit.text) or [exhibit.text]
        vectors = embedder.embed([item.claim, *sentences])
        closest = sorted(np.argsort(-(vectors[1:] @ vectors[0]), kind="stable")[:2].tolist())
        quoted = exhibit.model_copy(update={"text": " ".join(sentences[i] for i in closest)})
        record["quotes"] = list((await read_stance(llm, item.claim, quoted, negation=record["negation"])).per_order)
    if "contrast" in readers:
        contrast = await read_stance(llm, item.claim, exhibit, orders=2, negation=record["negation"], reader="contrast")
        record["contrast"] = list(contrast.per_order)
        record["contrast_sf"] = await statements_first(llm, line, item.claim, record["negation"])
    return record


async def collect(split: str, limit: int, out: Path, seed: int, readers: Sequence[str]) -> None:
    settings = AppSettings()
    corpus = corpus_by_id(Path(settings.checkcovid_dir))
    dataset = load_dataset("check-covid", split, checkcovid_dir=settings.checkcovid_dir)
    items = [i for i in dataset.items if i.label != "NOT ENOUGH INFO" and i.gold_evidence and i.gold_evidence[0].doc_id in corpus]
    random.Random(seed).shuffle(items)
    done = {json.loads(line)["id"] for line in out.open()} if out.exists() else set()
    llm = LLM(
        build_chat_model(ModelSpec(backend="embedded", logprobs=True, max_tokens=16), settings),
        role="judge",
        model_name="qwen",
        params={"temperature": 0.0},
    )
    embedder = MiniLMEmbedder()
    for n, item in enumerate(items[:limit], 1):
        if item.id in done:
            continue
        started = time.perf_counter()
        record = await read_claim(llm, embedder, item, corpus[item.gold_evidence[0].doc_id], readers)
        record["seconds"] = round(time.perf_counter() - started, 1)
        with out.open("a") as f:
            f.write(json.dumps(record) + "\n")
        print(f"{n}/{limit} {item.label} {record['seconds']}s", flush=True)


def mean(readings: Reading) -> dict[str, float]:
    return {s: float(np.mean([r[s] for r in readings])) for s in STANCES}


def divided(readings: Reading, prior: Reading) -> dict[str, float]:
    out: list[dict[str, float]] = []
    for r, q in zip(readings, prior, strict=True):
        v = {s: r[s] / max(q[s], 1e-3) for s in STANCES}
        total = sum(v.values())
        out.append({str(s): v[s] / total for s in STANCES})
    return mean(out)


READERS: dict[str, Callable[[dict[str, Any]], dict[str, float]]] = {
    "plain": lambda r: mean(r["plain"]),
    "plain, first order only": lambda r: r["plain"][0],
    "neutral": lambda r: mean(r["neutral"]),
    "shots": lambda r: mean(r["shots"]),
    "prior": lambda r: divided(r["plain"], r["prior"]),
    "negation": lambda r: mean([*r["plain"], *r.get("opposite", [])]),
    "negation + shots": lambda r: mean([*r["shots"], *r.get("opposite", [])]),
    "sentence": lambda r: mean(r["sentence"]),
    "plain + sentence": lambda r: mean([*r["plain"], *r["sentence"]]),
    "truefalse (claim and opposite)": lambda r: mean(r["truefalse"]),
    "passage first (claim and opposite)": lambda r: mean(r["passage_first"]),
    "quotes (claim and opposite)": lambda r: mean(r["quotes"]),
    "negation + truefalse": lambda r: mean([*r["plain"], *r["opposite"], *r["truefalse"]]),
    "negation + quotes": lambda r: mean([*r["plain"], *r["opposite"], *r["quotes"]]),
    "negation, first order of each": lambda r: mean([r["plain"][0], r["opposite"][0]]),
    "contrast, the passage before the statements (2 orders)": lambda r: mean(r["contrast"]),
    "contrast, the passage before the statements, first order": lambda r: r["contrast"][0],
    "contrast, statements first (2 orders)": lambda r: mean(r["contrast_sf"]),
    "negation + contrast": lambda r: mean([*r["plain"], *r["opposite"], *r["contrast"]]),
}
NEEDS = {
    "neutral": "neutral",
    "shots": "shots",
    "prior": "prior",
    "sentence": "sentence",
    "truefalse": "truefalse",
    "passage first": "passage_first",
    "quotes": "quotes",
    "contrast": "contrast",
}


def analyse(path: Path) -> None:
    rows = [json.loads(line) for line in path.open()]
    y = np.array([r["label"] == "SUPPORTS" for r in rows])
    if y.all() or not y.any():
        raise SystemExit(
            f"{path}: {len(rows)} claims, all {rows[0]['label'] if rows else 'missing'}: comparing readers needs SUPPORT and REFUTE claims"
        )

    def loo_accuracy(x: np.ndarray) -> float:
        hits = 0
        for i in range(len(x)):
            rest = np.arange(len(x)) != i
            best = max(np.unique(x[rest]), key=lambda t: np.mean((x[rest] >= t) == y[rest]))
            hits += int((x[i] >= best) == y[i])
        return hits / len(x)

    print(f"{len(rows)} claims, {int(y.sum())} SUPPORT; median {np.median([r['seconds'] for r in rows]):.0f} s a claim")
    print("| reader | AUC | accuracy (leave one out) | mean supports / contradicts / unrelated |\n| --- | ---: | ---: | --- |")
    for name, read in READERS.items():
        if any(word in name and NEEDS[word] not in rows[0] for word in NEEDS):
            continue  # this file did not collect that reader
        p = [read(r) for r in rows]
        x = np.array([q["SUPPORTS"] - q["REFUTES"] for q in p])
        m = np.array([[q[s] for s in STANCES] for q in p]).mean(0)
        print(f"| {name} | {metrics.auc(x.tolist(), y.tolist()):.3f} | {loo_accuracy(x):.3f} | {' / '.join(f'{v:.2f}' for v in m)} |")
    for key in ("plain", "neutral", "shots"):
        if key not in rows[0]:
            continue
        agree = np.mean([len({max(STANCES, key=o.get) for o in r[key]}) == 1 for r in rows])
        print(f"{key}: the orders agreed on {agree:.0%} of claims")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="docs/measurements/data/desk-readers.jsonl")
    parser.add_argument(
        "--readers",
        default=",".join(OLD_READERS),
        help=f"which readers to collect besides the shipped one: {', '.join(OLD_READERS + NEW_READERS)}",
    )
    parser.add_argument("--analyse", default="", help="compare the readers in this records file, without the model")
    args = parser.parse_args()
    if args.analyse:
        analyse(Path(args.analyse))
        return
    readers = [r.strip() for r in args.readers.split(",") if r.strip()]
    unknown = sorted(set(readers) - set(OLD_READERS + NEW_READERS))
    if unknown:
        parser.error(f"unknown readers: {', '.join(unknown)}")
    asyncio.run(collect(args.split, args.limit, Path(args.out), args.seed, readers))
    analyse(Path(args.out))


if __name__ == "__main__":
    main()
