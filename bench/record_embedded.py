"""Record `toolmad` debates on the embedded backend (Qwen2.5-Coder-1.5B on llama.cpp): time, calls and tokens per claim.

    .venv/bin/python bench/record_embedded.py [--set demo|check-covid|both] [--check-covid-claims 3]
        [--data-dir /tmp/toolmad-embedded] [--out docs/measurements/data]

One claim from the demo corpus and the first N Check-COVID dev claims (the first three
are one REFUTE, one SUPPORT and one NOTENOUGHINFO claim about the same abstract). Web
search is off (the Search debater falls back to the corpus, as it does offline); every
other option is the default, except a longer per-call timeout because the one llama.cpp
server is shared and calls queue. Each run is kept in the run store of ``--data-dir``
(replay it in the app with ``DEBATEDESK_DATA_DIR``), its events in
``OUT/toolmad-embedded-<claim>.jsonl``, and a summary row is appended to
``OUT/toolmad_embedded.md`` as soon as the claim is done, so a partial recording is
still a recording.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import (
    Event,
    RoundStarted,
    ScoreComputed,
    StageFailed,
    TurnCompleted,
    dump_event,
)
from pipelines.record.digest import digest
from pipelines.run.llm import embedded
from pipelines.run.runner import stream_run
from pipelines.run.services import Services

DEMO_CLAIMS = [("demo", "demo-masks", "Masks reduce transmission of respiratory viruses", "SUPPORTS")]
GOLD = {"SUPPORT": "SUPPORTS", "REFUTE": "REFUTES", "NOTENOUGHINFO": "NOT ENOUGH INFO"}
HEADER = (
    "| corpus | claim | gold | verdict | decided by | rounds | wall (s) | model calls (debater/scorer/judge; cached) | tokens in | tokens out | "
    "F per round (RAG/Search) | AR per round (RAG/Search) | failed stages |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


def check_covid_claims(folder: Path, n: int) -> list[tuple[str, str, str, str]]:
    rows = [json.loads(line) for line in (folder / "covidCheck_dev_composed.json").read_text().splitlines() if line.strip()]
    return [("check-covid", row["id"], row["claim"], GOLD.get(row["label"], row["label"])) for row in rows[:n]]


def summarize(corpus: str, claim_id: str, claim: str, gold: str, events: list[Event], wall: float) -> str:
    run = digest(events)
    calls, cost = run.calls, run.cost
    by_role = {role: sum(c.role == role for c in calls) for role in ("debater", "scorer", "judge")}
    verdict, failed = run.verdict, run.failure
    rounds = sum(isinstance(e, RoundStarted) for e in events)
    scores: dict[str, dict[str, float]] = {}
    for e in events:
        if isinstance(e, ScoreComputed):
            scores.setdefault(e.metric, {})[e.target] = e.value

    def per_round(metric: str) -> str:
        values = scores.get(metric, {})
        cells = []
        for r in range(1, rounds + 1):
            pair = [values.get(f"{agent}-r{r}") for agent in ("RAG", "Search")]
            cells.append("/".join("–" if v is None else f"{v:.2f}" for v in pair))
        return " · ".join(cells)

    stage_failures = [e.stage for e in events if isinstance(e, StageFailed)]
    label = verdict.label if verdict else f"run failed: {failed}"
    decided = verdict.decided_by if verdict else "–"
    short = claim if len(claim) <= 80 else claim[:77] + "..."
    return (
        f"| {corpus} | {short} | {gold} | {label} | {decided} | {rounds} | {wall:.0f} | {len(calls)} "
        f"({by_role['debater']}/{by_role['scorer']}/{by_role['judge']}; {cost.cached_calls} cached) | {cost.tokens_in:,} | "
        f"{cost.tokens_out:,} | {per_round('F')} | {per_round('AR')} | {len(stage_failures)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=["demo", "check-covid", "both"], default="both")
    parser.add_argument("--check-covid-claims", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/toolmad-embedded"))
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "measurements" / "data")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one model call may take (calls queue on one server)")
    parser.add_argument("--stop-server", action="store_true", help="stop the embedded llama.cpp server when done")
    args = parser.parse_args()

    settings = AppSettings(data_dir=args.data_dir)
    services = Services.create(settings)
    claims = (DEMO_CLAIMS if args.set in ("demo", "both") else []) + (
        check_covid_claims(settings.checkcovid_dir, args.check_covid_claims) if args.set in ("check-covid", "both") else []
    )
    args.out.mkdir(parents=True, exist_ok=True)
    table = args.out / "toolmad_embedded.md"
    if not table.exists():
        table.write_text(HEADER + "\n")
    base = RunConfig(protocol="toolmad").with_backend("embedded")
    base = base.model_copy(
        update={
            "retrieval": base.retrieval.model_copy(update={"web_search": False}),
            "belief": base.belief.model_copy(update={"debate_when": "always"}),  # a recorded debate, not the skip the app may make
            **{role: base.role(role).model_copy(update={"timeout_s": args.timeout}) for role in ("debater", "judge", "scorer")},
        }
    )
    print(f"recording {len(claims)} claim(s) on the embedded backend; events and summary in {args.out}", flush=True)
    try:
        for corpus, claim_id, claim, gold in claims:
            print(f"\n== {corpus} {claim_id}: {claim} (gold {gold})", flush=True)
            services.ensure_corpus(corpus)
            config = base.model_copy(update={"corpus": corpus})
            events: list[Event] = []
            log = args.out / f"toolmad-embedded-{re.sub(r'[^A-Za-z0-9_.-]', '_', claim_id)}.jsonl"
            started = time.perf_counter()
            with log.open("w") as sink:
                for evt in stream_run(claim, config, services):
                    events.append(evt)
                    sink.write(json.dumps(dump_event(evt)) + "\n")
                    sink.flush()
                    if isinstance(evt, TurnCompleted):
                        print(f"  {evt.turn.id}: {evt.turn.label} ({time.perf_counter() - started:.0f} s)", flush=True)
                    elif isinstance(evt, ScoreComputed):
                        print(f"    {evt.target} {evt.metric} = {evt.value:.2f}", flush=True)
                    elif isinstance(evt, StageFailed):
                        print(f"  ! {evt.stage}: {evt.reason[:200]}", flush=True)
            wall = time.perf_counter() - started
            row = summarize(corpus, claim_id, claim, gold, events, wall)
            with table.open("a") as out:
                out.write(row + "\n")
            print(row, flush=True)
    finally:
        if args.stop_server:
            embedded.stop_server(settings.model_cache)


if __name__ == "__main__":
    main()
