"""Does MERMAID's evidence memory save tool calls on related claims? Measured on Check-COVID dev.

Runs the `mermaid` protocol over the Check-COVID dev claims (groups of claims share one
abstract) in file order under three conditions: without memory (nothing recalled, nothing
kept); memory with recall only (the claim's recall at the start, no lookup tool); memory
with recall and the memory lookup tool. Each memory condition starts empty and each claim
keeps what it found for the next. Prints tool calls, model calls and verdicts, and the
ratios against no memory, overall and on the claims whose abstract an earlier claim used.
The response cache is off, so every condition's model calls reach the model.

    .venv/bin/python -m bench.memory                       # all 160 dev claims, fake backend (about 4 minutes)
    .venv/bin/python -m bench.memory --backend embedded --claims 6

The fake backend answers by word overlap: it answers as soon as the evidence in front of it
shares half the claim's content words, else tries the next tool. So on the fake the saving
comes from what memory recalls (real MiniLM similarity and entity matches over the real
claims), not from a model's judgement; the embedded run shows a real model's behaviour.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import Event
from pipelines.record.digest import Cost, digest
from pipelines.run.runner import stream_run
from pipelines.run.services import Services

GOLD = {"SUPPORT": "SUPPORTS", "REFUTE": "REFUTES", "NOTENOUGHINFO": "NOT ENOUGH INFO"}


@dataclass
class Tally:
    """What one condition cost and concluded, overall and on repeat-abstract claims."""

    cost: Cost = field(default_factory=Cost)  # every claim's model calls; wall_seconds: the whole condition
    tool_calls: int = 0
    correct: int = 0
    claims: int = 0
    no_tool_claims: int = 0
    failed: int = 0
    repeat_tool_calls: int = 0
    repeat_claims: int = 0
    verdicts: list[str] = field(default_factory=list)

    def add(self, events: Sequence[Event], gold: str, repeat: bool) -> None:
        run = digest(events)
        tools = run.queries
        verdict = run.verdict.label if run.verdict is not None else "failed"
        self.tool_calls += tools
        self.cost += run.cost.model_copy(update={"wall_seconds": 0.0})
        self.correct += verdict == gold
        self.claims += 1
        self.no_tool_claims += tools == 0
        self.failed += run.failure is not None
        self.verdicts.append(verdict)
        if repeat:
            self.repeat_tool_calls += tools
            self.repeat_claims += 1


def load_claims(folder: Path, limit: int | None) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in (folder / "covidCheck_dev_composed.json").read_text().splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def run_condition(claims: Sequence[dict[str, str]], config: RunConfig, services: Services) -> Tally:
    tally = Tally()
    seen: set[str] = set()
    started = time.perf_counter()
    for number, row in enumerate(claims, start=1):
        events = list(stream_run(row["claim"], config, services))
        tally.add(events, GOLD[row["label"]], repeat=row["cord_id"] in seen)
        seen.add(row["cord_id"])
        if number % 20 == 0:
            print(f"  {number}/{len(claims)} claims, {tally.tool_calls} tool calls so far", flush=True)
    tally.cost = tally.cost.model_copy(update={"wall_seconds": time.perf_counter() - started})
    return tally


def mermaid_config(backend: str, memory: bool, lookup_tool: bool = True) -> RunConfig:
    config = RunConfig().with_backend(backend)
    return config.model_copy(
        update={
            "protocol": "mermaid",
            "corpus": "check-covid",
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            "belief": config.belief.model_copy(update={"debate_when": "always"}),  # the researcher's memory is what is measured
            "mermaid": config.mermaid.model_copy(update={"use_memory": memory, "remember": memory, "memory_tool": lookup_tool}),
        }
    )


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "n/a"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="fake", help="fake (default) or embedded")
    parser.add_argument("--claims", type=int, default=None, help="only the first N dev claims (default: all 160)")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/debatedesk-bench-memory"), help="index and run store for the benchmark")
    args = parser.parse_args(argv)

    settings = AppSettings(data_dir=args.data_dir)
    services = Services.create(settings)
    # Every condition must reach the model: a cached answer from an earlier condition (or an
    # earlier run in the same folder) would make its calls free and its time meaningless.
    services.response_cache = None
    print(f"Indexing check-covid in {args.data_dir} (first time only)…", flush=True)
    services.ensure_corpus("check-covid")
    claims = load_claims(settings.checkcovid_dir, args.claims)
    groups = len({row["cord_id"] for row in claims})
    print(f"{len(claims)} Check-COVID dev claims over {groups} abstracts; backend {args.backend}; web search off", flush=True)

    assert services.memory is not None
    conditions = {
        "without memory": mermaid_config(args.backend, memory=False),
        "memory: recall only": mermaid_config(args.backend, memory=True, lookup_tool=False),
        "memory: recall + lookup tool": mermaid_config(args.backend, memory=True, lookup_tool=True),
    }
    results: dict[str, Tally] = {}
    for name, config in conditions.items():
        services.memory.clear()  # every memory condition starts empty and fills up claim by claim
        print(f"{name}:", flush=True)
        results[name] = run_condition(claims, config, services)

    print()
    print("| condition | tool calls | on repeat-abstract claims | claims with no tool call | model calls | accuracy | failed | time (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, t in results.items():
        print(
            f"| {name} | {t.tool_calls} | {t.repeat_tool_calls} ({t.repeat_claims} claims) | {t.no_tool_claims}/{t.claims} | "
            f"{t.cost.calls} | {t.correct}/{t.claims} ({t.correct / max(t.claims, 1):.1%}) | {t.failed} | {t.cost.wall_seconds:.1f} |"
        )
    cold = results["without memory"]
    print()
    for name, warm in list(results.items())[1:]:
        same = sum(a == b for a, b in zip(cold.verdicts, warm.verdicts, strict=True))
        print(
            f"{name} / without memory: tool calls {ratio(warm.tool_calls, cold.tool_calls)}, "
            f"on repeat-abstract claims {ratio(warm.repeat_tool_calls, cold.repeat_tool_calls)}, "
            f"model calls {ratio(warm.cost.calls, cold.cost.calls)}; same verdict {same}/{len(claims)}"
        )


if __name__ == "__main__":
    main()
