"""What a model's query rewrites and judge rerank add to recall, against the claim searched alone.

    .venv/bin/python bench/query_rewrites.py --backend embedded [--claims 24] [--rewrites 3] [--judge 10]
        [--split dev] [--data-dir DIR] [--timeout 1800]

Takes an evenly spaced sample of Check-COVID claims (every len/N-th claim of the split), has
the model rewrite each claim into ``--rewrites`` search queries (the prompt of
``retrieval.rewrites``), and compares, from one run, the share of claims whose deciding
abstract is found by: the claim alone (top k); the claim and its rewrites fused into one
ranking (top k); the union of each query's own top k (what ``retrieval.rewrites`` adds to a
pool), with the pool's size; and the claim alone at the k that gives a pool of the same size.
On the first ``--judge`` claims it also has the model rate the claim's fused top 20 in one
call (``retrieval.rerank = judge``) and compares the top 3. Every model answer goes through
the response cache in ``--data-dir``, so a repeated run is fast.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_quality import Claim, load_claims
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import DebateDeskError
from pipelines.run.llm.client import LLM
from pipelines.run.llm.registry import build_chat_model, get_backend
from pipelines.run.services import Services
from pipelines.run.tools.corpus_index import CorpusIndex
from pipelines.stages.query_formulation import formulate_queries
from pipelines.stages.rerank import RERANK_DEPTH, rerank_by_model

CORPUS = "check-covid"
KS = (3, 5, 10)


@dataclass
class Found:
    """One claim's rankings: document ids, best first."""

    claim: Claim
    alone: list[str]
    fused: list[str]
    each: list[list[str]]
    judged: list[str] | None = None
    seconds: list[float] = field(default_factory=list)

    def union(self, k: int) -> set[str]:
        return {doc for ranking in self.each for doc in ranking[:k]}


def sample(claims: list[Claim], n: int) -> list[Claim]:
    step = max(1, len(claims) // max(n, 1))
    return claims[::step][:n]


def documents(index: CorpusIndex, query: str | list[str], k: int) -> list[str]:
    return [hit.passage.doc_id for hit in index.search(CORPUS, query, k)]


def measure(index: CorpusIndex, llm: LLM, claim: Claim, rewrites: int, judge: bool) -> Found:
    started = time.perf_counter()
    queries = asyncio.run(formulate_queries(llm, claim.text, n=rewrites, on_failure=lambda why: print(f"  rewrite failed: {why}")))
    written = time.perf_counter()
    found = Found(
        claim=claim,
        alone=documents(index, claim.text, RERANK_DEPTH),
        fused=documents(index, queries, max(KS)),
        each=[documents(index, q, max(KS)) for q in queries],
        seconds=[written - started],
    )
    if judge:
        hits = index.search(CORPUS, claim.text, RERANK_DEPTH)
        try:
            found.judged = [hit.passage.doc_id for hit in asyncio.run(rerank_by_model(llm, claim.text, hits))]
        except DebateDeskError as exc:
            print(f"  judge rerank failed: {exc}")
        found.seconds.append(time.perf_counter() - written)
    return found


def table(rows: list[Found]) -> str:
    n = len(rows)

    def share(hit: list[bool]) -> str:
        return f"{sum(hit) / n:.3f}"

    lines = [
        "| k | claim alone R@k | claim + rewrites fused R@k | union of each query's top k | documents in the union | claim alone at that many |",
        "|---|---|---|---|---|---|",
    ]
    for k in KS:
        size = sum(len(r.union(k)) for r in rows) / n
        same = round(size)
        lines.append(
            f"| {k} | {share([r.claim.doc_id in r.alone[:k] for r in rows])} | {share([r.claim.doc_id in r.fused[:k] for r in rows])} | "
            f"{share([r.claim.doc_id in r.union(k) for r in rows])} | {size:.1f} | "
            f"{share([r.claim.doc_id in r.alone[:same] for r in rows])} (top {same}) |"
        )
    judged = [r for r in rows if r.judged is not None]
    if judged:
        m = len(judged)
        lines.append(
            f"\njudge rerank of the claim's top {RERANK_DEPTH}, {m} claims: R@3 "
            f"{sum(r.claim.doc_id in r.judged[:3] for r in judged if r.judged) / m:.3f} vs the fused order "
            f"{sum(r.claim.doc_id in r.alone[:3] for r in judged) / m:.3f}; R@1 "
            f"{sum(r.claim.doc_id in r.judged[:1] for r in judged if r.judged) / m:.3f} vs {sum(r.claim.doc_id in r.alone[:1] for r in judged) / m:.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--backend", default="fake", help="the model that rewrites and rates: fake (word overlap), embedded or openai")
    parser.add_argument("--claims", type=int, default=24, help="size of the evenly spaced sample")
    parser.add_argument("--rewrites", type=int, default=3)
    parser.add_argument("--judge", type=int, default=0, help="also rate the top 20 by the model on the first N claims")
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one model call may take (a shared server queues)")
    parser.add_argument("--checkcovid-dir", type=Path, default=AppSettings().checkcovid_dir)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/debatedesk-bench"))
    args = parser.parse_args(argv)

    settings = AppSettings(data_dir=args.data_dir, checkcovid_dir=args.checkcovid_dir)
    services = Services.create(settings, with_store=False)
    services.ensure_corpus(CORPUS)
    spec = ModelSpec(backend=args.backend, max_tokens=512, timeout_s=args.timeout)
    llm = LLM(build_chat_model(spec, settings), role="judge", model_name=get_backend(args.backend).default_model or args.backend)
    claims = sample(load_claims(args.checkcovid_dir, args.split), args.claims)
    print(
        f"{len(claims)} {args.split} claims, {args.rewrites} rewrites each, judge rerank on {min(args.judge, len(claims))}; model: {args.backend}"
    )
    rows = []
    for number, claim in enumerate(claims):
        row = measure(services.index, llm, claim, args.rewrites, judge=number < args.judge)
        rows.append(row)
        print(f"  [{number + 1}/{len(claims)}] {claim.id}: model {' + '.join(f'{s:.1f}' for s in row.seconds)} s", flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
