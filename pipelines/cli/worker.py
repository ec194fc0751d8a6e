"""``python -m pipelines worker``: take claims from the desk's work queue (its PostgreSQL) until stopped.

python -m pipelines worker [--concurrency 2] [--queue batch:ID ...] [--name NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any


def add_worker_command(sub: Any) -> None:
    parser = sub.add_parser("worker", help="take submitted claims from the desk's queue (needs DEBATEDESK_DATABASE_URL on PostgreSQL)")
    parser.add_argument("--concurrency", type=int, default=2, help="claims this worker runs at once (default 2, at most 16)")
    parser.add_argument("--queue", action="append", default=[], help="only these queues (default: every batch and the claims queue)")
    parser.add_argument("--name", default="", help="a name for this worker in procrastinate's table (default: none)")
    parser.set_defaults(handler=run_worker_command)


def run_worker_command(args: argparse.Namespace) -> int:
    from pipelines.core.config import AppSettings
    from pipelines.record.spill import replay_spills
    from pipelines.run.batch import MAX_CONCURRENCY, BatchInputError
    from pipelines.run.services import Services
    from pipelines.run.workers import conninfo, run_worker

    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise BatchInputError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}, got {args.concurrency}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("procrastinate").setLevel(logging.WARNING)  # its lines print each job's whole config; ours name the claim
    services = Services.create(AppSettings())
    conninfo(
        services.store.url if services.store is not None else "sqlite://"
    )  # a desk on SQLite has no queue: said before anything starts
    if services.store is not None:
        replay_spills(services.store, services.settings.data_dir)  # what this machine kept while the store was away goes in first
    print(f"worker: {args.concurrency} claims at once; stop with Ctrl-C (claims under way finish first)", file=sys.stderr, flush=True)
    asyncio.run(run_worker(services, concurrency=args.concurrency, queues=args.queue, name=args.name))
    return 0
