"""Three ways to read an exhibit's relevance, on the same exhibits, against the claims' deciding documents.

    .venv/bin/python bench/admissibility_readings.py --out READINGS.jsonl [--split dev] [--claims 20] [--skip 6]
        [--backend embedded|fake] [--data-dir DIR]
    .venv/bin/python bench/admissibility_readings.py --readings READINGS.jsonl   # the table again, no model
    .venv/bin/python bench/admissibility_readings.py --desk-records RECORDS.jsonl.gz [--split dev]   # desk's stored readings

PROClaim's judge rates each exhibit's relevance r and credibility c, and w = r x c ranks what
the court sees. This bench asks, on Check-COVID claims whose deciding (gold) document desk's
search finds among its 25 exhibits, how well each reading tells the deciding exhibit from the
others found for the same claim:

- ``rating``: proclaim's (the paper's): r, c and a reason written as JSON (one call);
- ``options`` (tried here, not in the app): two lettered questions, how the exhibit bears on the
  claim and how far its source can be trusted, each value the expected value of the answers'
  probabilities (the first answer 1, the second 0.5, the last 0) averaged over two orders of the
  answers, as desk reads stances (four one-token calls; the exhibit opens each prompt);
- ``desk``: desk's stance reading of the exhibit (its default question, the claim's opposite
  written once a claim), relevance = 1 - p(does not address the claim); its credibility is
  not asked.

The exhibits of a claim: every one from its deciding document and the first 5 others, in desk's
order, found by desk's search (``desk`` run on the fake backend: the search needs no model). The
claims: the label-balanced sample of the split (``bench/protocols.py``'s, SUPPORTS and REFUTES
only) after its first ``--skip``, those whose deciding document is among the 25, chosen before
anything is read. Each exhibit is one JSON line in ``--out`` at once, so a killed run goes on
where it stopped. The table: AUC of r (and of w where there is a c) for deciding against not,
over all exhibits and within each claim (mean), how often the deciding exhibit ranks first of
its claim's, and each reading's calls and prompt tokens computed (the server's cache left out)
per exhibit. ``--desk-records`` reads ``bench/desk.py --records`` (gzipped or not), whose records keep each exhibit's
document and stance, and prints the same AUC for desk's reading over every exhibit of every claim, no model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import HumanMessage, SystemMessage

from bench.json_lines import read_json_lines
from bench.protocols import claims as sample_claims
from pipelines.core.config import AppSettings, ModelSpec, RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import EvidenceRetrieved, ModelCallCompleted
from pipelines.eval.datasets import load_dataset
from pipelines.eval.metrics import auc
from pipelines.prompts import load_prompt
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.protocols.proclaim.run import opening_size
from pipelines.protocols.proclaim.settings import ProClaimConfig
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.stages.admissibility import AdmissibilityRating, admissibility_status, describe_source, relevance_of_reading
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.retrieval import format_evidence
from pipelines.stages.stance import negate, read_desk_stance

READINGS = ("rating", "options", "desk")
OTHERS = 5  # exhibits of a claim read beside its deciding one(s)
RELEVANCE = (
    "How does the exhibit bear on the claim?",
    (
        "It decides the claim: it shows the claim true or false.",
        "It bears on the claim but does not decide it.",
        "It is unrelated to the claim.",
    ),
)
CREDIBILITY = (
    "How far can the exhibit's source be trusted?",
    (
        "An authoritative, verifiable source (a peer-reviewed study, an official body).",
        "A source with some reason to trust it.",
        "No reason to trust it.",
    ),
)
VALUES = (1.0, 0.5, 0.0)  # what each answer counts for, best first
ORDERS = ((0, 1, 2), (1, 0, 2))  # the answers under the letters A, B, C: the two that are not "no" swap places
LETTERS = ("A", "B", "C")


async def read_options(llm: LLM, shown: dict[str, str]) -> tuple[float, float]:
    """Relevance and credibility, each the expected value of its lettered answers' probabilities over both ``ORDERS``."""
    head = f"Exhibit:\n{shown['evidence']}\nSource: {shown['source']}\n\nClaim: {shown['claim']}\n\n"
    values = []
    for words, answers in (RELEVANCE, CREDIBILITY):
        probabilities = [0.0, 0.0, 0.0]
        for order in ORDERS:
            options = "\n".join(f"{letter}. {answers[i]}" for letter, i in zip(LETTERS, order, strict=True))
            messages = [
                SystemMessage("You rule on the admissibility of evidence for a fact-checking court. Answer with one letter."),
                HumanMessage(f"{head}{words}\n{options}\n{options_line(LETTERS)}"),
            ]
            read = await estimate_label_probabilities(llm, messages, LETTERS, max_tokens=1)
            for letter, i in zip(LETTERS, order, strict=True):
                probabilities[i] += read.p(letter) / len(ORDERS)
        values.append(round(sum(p * v for p, v in zip(probabilities, VALUES, strict=True)), 4))
    return values[0], values[1]


def exhibits_for(claim: str, services: Services) -> list[Evidence]:
    """Desk's exhibits for ``claim``, in its order: its search, run on the fake backend (no model is read)."""
    config = RunConfig(protocol="desk", corpus="check-covid")
    config.retrieval.web_search = False
    config = config.model_copy(
        update={role: config.role(role).model_copy(update={"backend": "fake"}) for role in ("debater", "judge", "scorer")}
    )
    return [e.evidence for e in stream_run(claim, config, services) if isinstance(e, EvidenceRetrieved)]


async def read(llm: LLM, calls: list[ModelCallCompleted], claim: str, opposite: str, exhibit: Evidence) -> dict[str, Any]:
    """The three readings of one exhibit, each with the calls and prompt tokens it cost."""
    shown = {"claim": claim, "source": describe_source(exhibit), "evidence": format_evidence([exhibit], max_chars=1200)}

    async def rating() -> tuple[float, float] | None:
        try:
            answer = await llm.structured(load_prompt("admissibility").render(**shown), AdmissibilityRating)
        except ModelOutputError:  # a malformed answer is the reading's failure, counted in the table
            return None
        return answer.relevance, answer.credibility

    async def options() -> tuple[float, float]:
        return await read_options(llm, shown)

    async def desk() -> tuple[float, None]:
        stance = await read_desk_stance(llm, DeskConfig(), claim, exhibit, opposite=opposite)
        return round(1 - stance.probabilities["UNRELATED"], 4), None

    row: dict[str, Any] = {}
    for name, reading in (("rating", rating), ("options", options), ("desk", desk)):
        before = len(calls)
        row[name] = await reading()
        spent = calls[before:]
        row[f"{name}_calls"] = len(spent)
        row[f"{name}_computed"] = sum(c.tokens_in - c.tokens_reused for c in spent)
    return row


async def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = {row["key"] for row in read_json_lines(out, missing_ok=True)}
    settings = AppSettings(data_dir=Path(args.data_dir or tempfile.mkdtemp()))
    services = Services.create(settings, with_store=False)
    dataset = load_dataset("check-covid", args.split, checkcovid_dir=settings.checkcovid_dir)
    sample = [i for i in sample_claims(dataset, labels="three", limit=len(dataset.items), skip=0) if i.label in ("SUPPORTS", "REFUTES")]
    calls: list[ModelCallCompleted] = []
    spec = ModelSpec(backend=args.backend, logprobs=True, max_tokens=160)
    llm = LLM(build_chat_model(spec, settings), role="judge", model_name=args.backend, params={"temperature": 0.0}, on_call=calls.append)
    chosen = 0
    for item in sample[args.skip :]:
        if chosen >= args.claims:
            break
        gold = {g.doc_id for g in item.gold_evidence}
        found = exhibits_for(item.claim, services)
        deciding = [e for e in found if e.doc_id in gold]
        if not deciding:
            continue
        chosen += 1
        picked = deciding + [e for e in found if e.doc_id not in gold][:OTHERS]
        if all(f"{item.id}/{e.id}" in done for e in picked):
            continue
        opposite, _ = await negate(llm, item.claim)
        for exhibit in picked:
            key = f"{item.id}/{exhibit.id}"
            if key in done:
                continue
            row = {"key": key, "claim": item.id, "rank": found.index(exhibit), "deciding": exhibit.doc_id in gold}
            row |= await read(llm, calls, item.claim, opposite, exhibit)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"  {key} deciding={row['deciding']} " + " ".join(f"{n}={row[n]}" for n in READINGS), flush=True)


def table(rows: Sequence[dict[str, Any]]) -> str:
    claims = sorted({r["claim"] for r in rows})
    lines = [
        f"{len(rows)} exhibits of {len(claims)} claims, {sum(r['deciding'] for r in rows)} from a deciding document",
        "",
        "| reading | AUC of r | AUC of w = r x c | AUC of r within a claim (mean) | deciding ranked first | calls an exhibit | prompt tokens computed an exhibit (median) | failed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in READINGS:
        ok = [r for r in rows if r[name] is not None]
        lines.append(
            f"| {name} | {_auc(ok, lambda r, n=name: r[n][0])} | "
            + (_auc(ok, lambda r, n=name: r[n][0] * r[n][1]) if ok and ok[0][name][1] is not None else "n/a")
            + f" | {_within(ok, name)} | {_first(ok, name, claims)} | {statistics.mean(r[f'{name}_calls'] for r in rows):.1f} | "
            f"{statistics.median(r[f'{name}_computed'] for r in rows):.0f} | {len(rows) - len(ok)} |"
        )
    return "\n".join(lines)


def _auc(rows: Sequence[dict[str, Any]], value: Callable[[dict[str, Any]], float]) -> str:
    return f"{auc([value(r) for r in rows], [r['deciding'] for r in rows]):.3f}"


def _within(rows: Sequence[dict[str, Any]], name: str) -> str:
    by_claim = [[r for r in rows if r["claim"] == c] for c in sorted({r["claim"] for r in rows})]
    values = [auc([r[name][0] for r in group], [r["deciding"] for r in group]) for group in by_claim]
    values = [v for v in values if v == v]  # a claim with no exhibit of one kind has none
    return f"{statistics.mean(values):.3f}" if values else "n/a"


def _first(rows: Sequence[dict[str, Any]], name: str, claims: Sequence[str]) -> str:
    """Claims whose highest r (ties: desk's order) is an exhibit of the deciding document."""
    hits = 0
    for claim in claims:
        group = [r for r in rows if r["claim"] == claim]
        if group:
            hits += max(group, key=lambda r: (r[name][0], -r["rank"]))["deciding"]
    return f"{hits} of {len(claims)}"


def stored_desk(path: Path, split: str) -> str:
    """The AUC of desk's stored readings (1 - p(does not address)) for the deciding documents, over every exhibit read."""
    dataset = load_dataset("check-covid", split, checkcovid_dir=AppSettings().checkcovid_dir)
    gold = {item.id: {g.doc_id for g in item.gold_evidence} for item in dataset.items}
    records = read_json_lines(path)
    groups = [
        [(1 - e["probabilities"]["UNRELATED"], e["doc_id"] in gold.get(r["id"], set())) for e in r["exhibits"]]
        for r in records
        if r.get("exhibits")
    ]
    pooled = [pair for group in groups for pair in group]
    within = [auc([x for x, _ in g], [y for _, y in g]) for g in groups]
    within = [v for v in within if v == v]
    return (
        f"desk's stored readings: {len(pooled)} exhibits of {len(groups)} claims, {sum(y for _, y in pooled)} from a deciding document; "
        f"AUC {auc([x for x, _ in pooled], [y for _, y in pooled]):.3f} over all, {statistics.mean(within):.3f} within a claim (mean of {len(within)})\n"
        + court_statuses([pair for group in groups for pair in group[:COURT_OPENS_ON]])
    )


COURT_OPENS_ON = opening_size(ProClaimConfig())  # a grounded court's candidates among desk's exhibits, at the defaults


def court_statuses(pairs: Sequence[tuple[float, bool]]) -> str:
    """How a grounded court would rule these exhibits from desk's reading (r as relevance_of_reading, c 1, the default thresholds)."""
    statuses = [(admissibility_status(relevance_of_reading(1 - addressed)), y) for addressed, y in pairs]

    def share(status: str, deciding: bool) -> str:
        kind = [s for s, y in statuses if y == deciding]
        return f"{sum(s == status for s in kind) / len(kind):.2f}" if kind else "n/a"

    return (
        f"as a grounded court rules the first {COURT_OPENS_ON} of each claim ({len(statuses)} exhibits): "
        f"admitted {share('admitted', True)} of the deciding and {share('admitted', False)} of the others, "
        f"discarded {share('discarded', True)} and {share('discarded', False)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="where each exhibit's readings are kept (JSON lines), appended to")
    parser.add_argument("--readings", help="print the table of an earlier --out, no model")
    parser.add_argument("--desk-records", help="print the AUC of desk's stored readings in bench/desk.py records, no model")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--claims", type=int, default=20, help="claims whose deciding document desk's search finds")
    parser.add_argument("--skip", type=int, default=6, help="the sample's first claims left out (6: the stored proclaim runs')")
    parser.add_argument("--backend", default="embedded", choices=("embedded", "fake"))
    parser.add_argument("--data-dir", help="a data folder with the check-covid corpus indexed (default: a new one, indexed first)")
    args = parser.parse_args()
    if args.desk_records:
        print(stored_desk(Path(args.desk_records), args.split))
        return
    if not args.readings and not args.out:
        parser.error("give --out to read, or --readings to print an earlier run's table")
    if args.out:
        asyncio.run(run(args))
    print(table(read_json_lines(Path(args.readings or args.out))))


if __name__ == "__main__":
    main()
