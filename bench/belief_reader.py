"""The judge's belief on the evidence alone, read in several ways: which reading tells a supported claim from a refuted one.

    .venv/bin/python bench/belief_reader.py --records FILE.jsonl [--split train] [--limit 24] [--data-dir DIR]
    .venv/bin/python bench/belief_reader.py --records FILE.jsonl --analyse

For each claim of the label-balanced sample, desk runs it as a stored run (its exhibits, each
exhibit's stance, its calibrated verdict) and its belief "from the exhibits alone" is kept:
the reading every debate's belief chart starts from. Then the same evidence items are read
again by each variant, in the belief's two option orders:

- ``shipped``: the run's own reading (the belief prompt, the items desk shows, 400 characters each);
- ``three``: the same prompt over the first 3 of those items only;
- ``tagged``: each item opened by the stance desk read for it ("desk read this item as
  supporting the claim"), the words a checker sees beside each exhibit;
- ``worded``: desk's stance wording for the whole evidence ("supports the claim, contradicts it,
  or does not settle it; details matter: a different number ... contradicts it").

One JSON line per claim keeps every reading, so ``--analyse`` compares them offline: the AUC
of p(supported) - p(refuted) between SUPPORTS and REFUTES claims, how often the likelier side
is the gold one, the mean gap between the two sides, the AUC of p(not enough info) between
NOT ENOUGH INFO claims and the rest, and desk's calibrated p(supported) beside them. Tune on
train.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from bench.protocols import claims, read_records, run_claim
from pipelines.core.config import AppSettings, ModelSpec, RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.events import BeliefRead, EvidenceRetrieved, ExhibitStanceRead, StageCompleted
from pipelines.eval import metrics
from pipelines.eval.datasets import load_dataset
from pipelines.eval.harness import evaluation_config
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.run.runner import Services
from pipelines.stages.belief import LETTERS, ORDERS, mean_belief, options_block
from pipelines.stages.debate_history import NO_HISTORY
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.retrieval import format_evidence

VARIANTS = ("shipped", "three", "tagged", "worded", "contrast", "contrast_three")
EVIDENCE_CHARS = 400
STANCE_WORDS = {"SUPPORTS": "supporting the claim", "REFUTES": "contradicting the claim", "UNRELATED": "not addressing the claim"}
WORDED_SYSTEM = (
    "You are the neutral judge of a fact-checking debate. Check the claim against the evidence: say whether the evidence supports "
    "the claim, contradicts it, or does not settle it. Details matter: evidence that gives a different number, time, direction or "
    "group than the claim contradicts it. Answer with one letter."
)
CONTRAST_SYSTEM = (
    "You are the neutral judge of a fact-checking debate. Check two opposite statements against the evidence and the arguments "
    "made so far. Say which statement they support, or that they settle neither. Answer with one letter."
)
CONTRAST_NEITHER = "Neither: the evidence does not settle them."
WORDED_OPTIONS = {
    "SUPPORTS": "The evidence supports the claim.",
    "REFUTES": "The evidence contradicts the claim.",
    "NOT ENOUGH INFO": "The evidence does not settle it.",
}


def belief_messages(claim: str, evidence: Sequence[Evidence], order: Sequence[str]) -> list[BaseMessage]:
    """The shipped belief prompt, no debate yet."""
    text = format_evidence(list(evidence), max_chars=EVIDENCE_CHARS)
    return load_prompt("belief").render(claim=claim, evidence=text, debate=NO_HISTORY, options=options_block(order))  # type: ignore[arg-type]


def worded_messages(claim: str, evidence: Sequence[Evidence], order: Sequence[str]) -> list[BaseMessage]:
    options = "\n".join(f"{letter}. {WORDED_OPTIONS[label]}" for letter, label in zip(LETTERS, order, strict=True))
    user = (
        f"Claim: {claim}\n\nEvidence:\n{format_evidence(list(evidence), max_chars=EVIDENCE_CHARS)}\n\n"
        f"What does the evidence say about the claim?\n{options}\n{options_line(LETTERS)}"
    )
    return [SystemMessage(content=WORDED_SYSTEM), HumanMessage(content=user)]


def contrast_messages(opposite: str) -> Any:
    """desk's contrast question asked of the whole evidence: the claim and its opposite are answers A and B (swapped in the second order)."""

    def ask(claim: str, evidence: Sequence[Evidence], order: Sequence[str]) -> list[BaseMessage]:
        text = {"SUPPORTS": " ".join(claim.split()), "REFUTES": " ".join(opposite.split()), "NOT ENOUGH INFO": CONTRAST_NEITHER}
        options = "\n".join(f"{letter}. {text[label]}" for letter, label in zip(LETTERS, order, strict=True))
        user = (
            f"Evidence:\n{format_evidence(list(evidence), max_chars=EVIDENCE_CHARS)}\n\nThe debate so far:\n{NO_HISTORY}\n\n"
            f"Which statement do the evidence and the debate so far support?\n{options}\n{options_line(LETTERS)}"
        )
        return [SystemMessage(content=CONTRAST_SYSTEM), HumanMessage(content=user)]

    return ask


def tagged(evidence: Sequence[Evidence], stances: dict[str, dict[str, float]]) -> list[Evidence]:
    """Each item opened by the stance desk read for it (its likeliest answer)."""
    out = []
    for e in evidence:
        stance = stances.get(e.id)
        if stance:
            word = STANCE_WORDS[max(stance, key=lambda k: stance[k])]
            e = e.model_copy(update={"text": f"(desk read this item as {word}) {e.text}"})
        out.append(e)
    return out


async def read(llm: LLM, ask: Any, claim: str, evidence: Sequence[Evidence]) -> dict[str, Any]:
    """Both option orders, averaged as the belief averages them."""
    per_order = []
    for order in ORDERS:
        got = await estimate_label_probabilities(llm, ask(claim, evidence, order), LETTERS, max_tokens=1)
        per_order.append({label: got.p(letter) for letter, label in zip(LETTERS, order, strict=True)})
    return {"probabilities": mean_belief(per_order), "per_order": per_order}


async def read_claim(llm: LLM, claim: str, events: Sequence[Any]) -> dict[str, Any]:
    pool = {e.evidence.id: e.evidence for e in events if isinstance(e, EvidenceRetrieved)}
    stances = {e.evidence_id: dict(e.probabilities) for e in events if isinstance(e, ExhibitStanceRead) and e.round == 1}
    first = next(e for e in events if isinstance(e, BeliefRead))
    opposite = next(e.detail.split(": ", 1)[1] for e in events if isinstance(e, StageCompleted) and e.stage == "negation")
    shown = [pool[i] for i in first.evidence_ids if i in pool]
    return {
        "shown": [e.id for e in shown],
        "shipped": {"probabilities": dict(first.probabilities), "per_order": [dict(p) for p in first.per_order]},
        "three": await read(llm, belief_messages, claim, shown[:3]),
        "tagged": await read(llm, belief_messages, claim, tagged(shown, stances)),
        "worded": await read(llm, worded_messages, claim, shown),
        "contrast": await read(llm, contrast_messages(opposite), claim, shown),
        "contrast_three": await read(llm, contrast_messages(opposite), claim, shown[:3]),
        "opposite": opposite,
    }


async def collect(args: argparse.Namespace) -> None:
    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="belief-reader-"))
    settings = AppSettings(data_dir=data_dir)
    dataset = load_dataset("check-covid", args.split, checkcovid_dir=settings.checkcovid_dir)
    services = Services.create(settings)
    config = evaluation_config(RunConfig(), protocol="desk", backend=args.backend, corpus="check-covid")
    llm = LLM(
        build_chat_model(ModelSpec(backend=args.backend, logprobs=True, max_tokens=16), settings),
        role="judge",
        model_name="qwen",
        params={"temperature": 0.0},
    )
    out = Path(args.records)
    done = {r["id"] for r in read_records(out)}
    for item in claims(dataset, labels="three", limit=args.limit, skip=0):
        if item.id in done:
            continue
        record = await asyncio.to_thread(run_claim, item, dataset, services, "desk", config)
        events = services.store.events(record["run_id"]) if services.store is not None else []
        readings = await read_claim(llm, item.claim, events)
        line = {"id": item.id, "gold": item.label, "desk_p": record["p_supported"], "desk_label": record["predicted"], **readings}
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        print(f"  {item.id} {item.label}: " + ", ".join(f"{v} {_gap(line[v]):+.2f}" for v in VARIANTS), file=sys.stderr, flush=True)


def _gap(reading: dict[str, Any]) -> float:
    p = reading["probabilities"]
    return float(p["SUPPORTS"] - p["REFUTES"])


def analyse(rows: Sequence[dict[str, Any]]) -> str:
    """One row per variant: how well each reading tells the sides apart, and NOT ENOUGH INFO from the rest."""
    sided = [r for r in rows if r["gold"] in ("SUPPORTS", "REFUTES")]
    truth = [r["gold"] == "SUPPORTS" for r in sided]
    nei = [r["gold"] == "NOT ENOUGH INFO" for r in rows]
    lines = [
        f"{len(rows)} claims ({len(sided)} SUPPORTS or REFUTES)",
        "",
        "| reading | AUC of p(S) - p(R), S vs R | likelier side right | mean abs gap | AUC of p(NEI), NEI vs rest | mean p(NEI) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for v in VARIANTS:
        gaps = [_gap(r[v]) for r in sided]
        p_nei = [r[v]["probabilities"]["NOT ENOUGH INFO"] for r in rows]
        right = sum(g > 0 if t else g < 0 for g, t in zip(gaps, truth, strict=True))  # a tie takes no side
        lines.append(
            f"| `{v}` | {_auc(gaps, truth)} | {right} of {len(sided)} | {statistics.mean(abs(g) for g in gaps):.3f} | "
            f"{_auc(p_nei, nei)} | {statistics.mean(p_nei):.2f} |"
        )
    desk = [r["desk_p"] for r in sided]
    if all(p is not None for p in desk):
        right = sum(p > 0.5 if t else p < 0.5 for p, t in zip(desk, truth, strict=True))
        lines.append(f"| desk's calibrated p(supported) | {_auc(desk, truth)} | {right} of {len(sided)} | | | |")
    return "\n".join(lines)


def _auc(scores: Sequence[float], truth: Sequence[bool]) -> str:
    if len(set(truth)) < 2:
        return "n/a"
    return f"{metrics.auc(list(scores), list(truth)):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", required=True, help="JSON lines, one per claim; appended to, and read to resume")
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--data-dir", default="", help="reuse this data folder (its index and response cache)")
    parser.add_argument("--analyse", action="store_true", help="print the comparison of the records, run nothing")
    args = parser.parse_args()
    if not args.analyse:
        asyncio.run(collect(args))
    print(analyse(read_records(Path(args.records))))


if __name__ == "__main__":
    main()
