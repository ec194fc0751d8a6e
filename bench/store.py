"""Run-store speed: events written per second (each persisted on its own, as a live run does) and the time to open a
run of 1,000 events (load + parse, what History and a replay do), for SQLite and PostgreSQL.

    .venv/bin/python -m bench.store [--events 3000] [--postgres-url URL]

Without a URL (or DEBATEDESK_BENCH_POSTGRES_URL / DEBATEDESK_TEST_POSTGRES_URL) a throwaway PostgreSQL is started on
loopback with `.ci/postgres` and stopped at the end. Figures are measured in this one run, on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python bench/store.py` too, as the other scripts are

from bench.throwaway_postgres import fresh_database, postgres
from pipelines.core.domain import Evidence, Turn
from pipelines.core.events import ArgumentDelta, Event, EvidenceRetrieved, ModelCallCompleted, QueryIssued, StageStarted, TurnCompleted
from pipelines.record.store import RunStore


def sample_events(n: int) -> list[Event]:
    """A live run's mix: mostly streamed chunks, then evidence, model-call accounting, stages and turns."""
    events: list[Event] = []
    for i in range(n):
        k = i % 20
        if k < 13:
            events.append(ArgumentDelta(turn_id=f"A-r{i // 100}", agent="A", round=i // 100, text="masks reduce transmission "))
        elif k < 15:
            ev = Evidence(
                id=f"E{i}",
                source="corpus",
                text="Randomized trials found masks reduce transmission. " * 6,
                title="Trial",
                corpus="demo",
                doc_id=f"d{i}",
                passage_index=0,
                retrieval_score=0.7,
                query="masks",
                round=1,
                found_by="A",
            )
            events.append(EvidenceRetrieved(agent="A", round=1, evidence=ev))
        elif k < 17:
            events.append(ModelCallCompleted(role="debater", model="fake", tokens_in=800, tokens_out=120, seconds=1.5))
        elif k < 18:
            events.append(QueryIssued(agent="A", round=1, query="masks transmission trial", tool="corpus"))
        elif k < 19:
            events.append(StageStarted(stage="answer", detail="reasoning over the evidence"))
        else:
            events.append(
                TurnCompleted(
                    turn=Turn(
                        id=f"A-r{i}", agent="A", round=1, text="Masks reduce transmission [E1]. " * 20, label="SUPPORTS", cited=("E1",)
                    )
                )
            )
    return events


def measure(store: RunStore, n_write: int) -> dict[str, float]:
    run_id = uuid.uuid4().hex[:12]
    store.create_run(run_id, "Masks reduce transmission", "single", {"protocol": "single"})
    events = sample_events(n_write)
    started = time.perf_counter()
    for evt in events:
        store.append(run_id, evt)
    write_s = time.perf_counter() - started

    thousand = uuid.uuid4().hex[:12]
    store.create_run(thousand, "Masks reduce transmission", "single", {"protocol": "single"})
    for evt in sample_events(1000):
        store.append(thousand, evt)
    opens = []
    for _ in range(7):
        t = time.perf_counter()
        assert len(store.events(thousand)) == 1000
        store.get_run(thousand)
        opens.append(time.perf_counter() - t)
    lists = []
    for _ in range(5):
        t = time.perf_counter()
        store.list_runs()
        lists.append(time.perf_counter() - t)
    return {"events_per_s": n_write / write_s, "open_1000_ms": statistics.median(opens) * 1000, "list_ms": statistics.median(lists) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=3000, help="events written one by one in the write test")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("DEBATEDESK_BENCH_POSTGRES_URL") or os.environ.get("DEBATEDESK_TEST_POSTGRES_URL")
    )
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = measure(RunStore(f"sqlite:///{tmp}/runs.sqlite"), args.events)
    with postgres(args.postgres_url) as server, fresh_database(server) as url:
        store = RunStore(url)
        results["postgresql"] = measure(store, args.events)
        store.engine.dispose()
    print(f"run store, {args.events:,} events appended one at a time (each its own transaction), then a run of 1,000 events opened")
    print(f"{'database':<12}{'events/s':>12}{'open 1,000 (ms)':>18}{'list runs (ms)':>17}")
    for name, r in results.items():
        print(f"{name:<12}{r['events_per_s']:>12,.0f}{r['open_1000_ms']:>18.1f}{r['list_ms']:>17.1f}")
    sq, pg = results["sqlite"], results["postgresql"]
    print(
        f"postgresql / sqlite: writes x{pg['events_per_s'] / sq['events_per_s']:.2f}, open x{pg['open_1000_ms'] / sq['open_1000_ms']:.2f}"
    )


if __name__ == "__main__":
    main()
