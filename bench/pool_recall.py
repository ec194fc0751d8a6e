"""Pool recall: is a claim's deciding abstract anywhere in a protocol's evidence pool when the run ends?

    .venv/bin/python bench/pool_recall.py --protocol single [--limit N] [--split dev] [--mode hybrid]
        [--rewrites 0 --rewrites 2] [--backend fake] [--data-dir /tmp/debatedesk-bench]

Runs the protocol on each Check-COVID claim (web search off, every role on ``--backend``,
the fake one by default: instant, word overlap, not a model) against the check-covid corpus,
and prints, from one run: pool recall (share of claims whose ``cord_id`` is among the
documents of the evidence the run retrieved), the mean number of documents and passages in
the pool, and seconds per claim; each ``--rewrites`` value (``retrieval.rewrites``) is a row. The index is built in ``--data-dir`` on first use and reused.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_quality import Claim, load_claims
from pipelines.core.config import AppSettings, RunConfig
from pipelines.record.digest import digest
from pipelines.run.runner import stream_run
from pipelines.run.services import Services


@dataclass(frozen=True)
class PoolRecall:
    protocol: str
    rewrites: int
    claims: int
    found: int
    documents: float
    passages: float
    seconds: float
    failed: int

    @property
    def recall(self) -> float:
        return self.found / self.claims if self.claims else 0.0

    def line(self) -> str:
        return (
            f"| {self.protocol} | {self.rewrites} | {self.claims} | {self.recall:.3f} | {self.documents:.1f} | {self.passages:.1f} | "
            f"{self.seconds:.2f} | {self.failed} |"
        )


HEADER = (
    "| protocol | rewrites | claims | pool recall | documents in pool | passages in pool | s per claim | failed runs |\n"
    "|---|---|---|---|---|---|---|---|"
)


def pool_recall(protocol: str, claims: list[Claim], services: Services, config: RunConfig) -> PoolRecall:
    """Run ``protocol`` on every claim and count the runs whose pool holds the deciding document."""
    config = config.model_copy(update={"protocol": protocol, "corpus": "check-covid"})
    found = failed = 0
    documents = passages = 0
    started = time.perf_counter()
    for claim in claims:
        run = digest(stream_run(claim.text, config, services))
        pool = [e for e in run.evidence.values() if e.source == "corpus" and e.doc_id]
        pool_docs = {str(e.doc_id) for e in pool}
        pool_passages = {f"{e.doc_id}#{e.passage_index}" for e in pool}
        failed += run.failure is not None
        found += claim.doc_id in pool_docs
        documents += len(pool_docs)
        passages += len(pool_passages)
    n = max(len(claims), 1)
    return PoolRecall(
        protocol, config.retrieval.rewrites, len(claims), found, documents / n, passages / n, (time.perf_counter() - started) / n, failed
    )


def fake_services(data_dir: Path, checkcovid_dir: Path) -> Services:
    from pipelines.run.llm.fake import FakeChatModel

    services = Services.create(AppSettings(data_dir=data_dir, checkcovid_dir=checkcovid_dir), with_store=False)
    services.chat_override = FakeChatModel()
    return services


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--protocol", action="append", help="protocol to run (repeatable); default single")
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "lexical"])
    parser.add_argument("--rewrites", type=int, action="append", help="retrieval.rewrites (repeatable: one row each); default 0")
    parser.add_argument("--backend", default="fake", help="every role's backend (fake unless you mean to wait for a real model)")
    parser.add_argument("--checkcovid-dir", type=Path, default=AppSettings().checkcovid_dir)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/debatedesk-bench"))
    args = parser.parse_args(argv)

    claims = load_claims(args.checkcovid_dir, args.split, args.limit)
    if args.backend == "fake":
        services = fake_services(args.data_dir, args.checkcovid_dir)
    else:
        services = Services.create(AppSettings(data_dir=args.data_dir, checkcovid_dir=args.checkcovid_dir), with_store=False)
    started = time.perf_counter()
    services.ensure_corpus("check-covid")
    print(
        f"check-covid index ready in {time.perf_counter() - started:.1f} s; {len(claims)} {args.split} claims; search {args.mode}",
        flush=True,
    )
    config = RunConfig().with_backend(args.backend)
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": False, "mode": args.mode})})
    print(HEADER)
    for protocol in args.protocol or ["single"]:
        for rewrites in args.rewrites or [0]:
            retrieval = config.retrieval.model_copy(update={"rewrites": rewrites})
            print(pool_recall(protocol, claims, services, config.model_copy(update={"retrieval": retrieval})).line(), flush=True)


if __name__ == "__main__":
    main()
