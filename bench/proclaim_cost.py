"""Cost per claim of debate protocols, side by side: model calls, tokens and wall time, and where they go by stage.

Runs each named protocol that is registered on the same claims with the fake backend made
to behave like a served model: every call takes a fixed overhead plus time per output
token, and token counts are the fake's (~1.3 tokens a word of prompt and answer). Calls go
through the real runner, so each protocol's concurrency (and the per-backend limit) shows
in the wall time. Protocols that are not registered on this branch are reported and skipped.

    .venv/bin/python bench/proclaim_cost.py                       # proclaim and toolmad on 3 demo claims
    .venv/bin/python bench/proclaim_cost.py --protocols proclaim single --overhead 0.2 --tokens-per-s 50
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from pipelines.core.config import AppSettings, RunConfig
from pipelines.protocols.base import protocol_names
from pipelines.record.digest import Cost, digest
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services

CLAIMS = [
    "Masks reduce transmission of respiratory viruses",
    "The Great Wall of China is visible from space with the naked eye",
    "Sugar makes children hyperactive",
]


class ServedLikeFake(FakeChatModel):
    """The fake backend with a served model's timing: overhead per call plus time per output token."""

    overhead_s: float = 0.25
    tokens_per_s: float = 60.0

    def _delay(self, messages: list[BaseMessage], text: str) -> float:
        return self.overhead_s + self._usage(messages, text)["output_tokens"] / self.tokens_per_s

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        text = self.reply(messages, kwargs.get("response_format"))
        await asyncio.sleep(self._delay(messages, text))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=self._usage(messages, text)))])

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        text = self.reply(messages, kwargs.get("response_format"))
        chunks = list(self._chunks(text))
        await asyncio.sleep(self.overhead_s)
        per_chunk = (self._delay(messages, text) - self.overhead_s) / max(1, len(chunks))
        for piece in chunks:
            await asyncio.sleep(per_chunk)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=self._usage(messages, text)))


@dataclass
class ClaimRun:
    protocol: str
    claim: str
    wall_s: float
    total: Cost
    by_stage: dict[str, Cost] = field(default_factory=dict)
    verdict: str = ""


def run_claim(protocol: str, claim: str, services: Services, base: RunConfig) -> ClaimRun:
    config = base.model_copy(update={"protocol": protocol})
    started = time.perf_counter()
    # Stages nest ("role switch" > "role switch: arguments") and run side by side ("RAG answer" with "Search answer"):
    # the digest counts a call towards the innermost open stages; side-by-side ones share it ("RAG answer + Search answer").
    run = digest(stream_run(claim, config, services))
    wall = time.perf_counter() - started
    verdict = run.verdict
    if verdict is not None:
        shown = f"{verdict.label} ({verdict.confidence:.2f})" if verdict.confidence is not None else verdict.label
    else:
        shown = f"FAILED: {(run.failure or 'no verdict')[:80]}"
    return ClaimRun(protocol=protocol, claim=claim, wall_s=wall, total=run.cost, by_stage=run.by_stage, verdict=shown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocols", nargs="+", default=["proclaim", "toolmad"])
    parser.add_argument("--claims", nargs="+", default=CLAIMS)
    parser.add_argument("--corpus", default="demo")
    parser.add_argument("--overhead", type=float, default=0.25, help="seconds per call before the first token")
    parser.add_argument("--tokens-per-s", type=float, default=60.0, help="output tokens per second of the simulated model")
    parser.add_argument("--concurrency", type=int, default=4, help="parallel calls allowed per backend")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="an existing data folder with the corpus indexed (default: a temporary one)"
    )
    args = parser.parse_args(argv)

    known = protocol_names()
    chosen = [p for p in args.protocols if p in known]
    for missing in [p for p in args.protocols if p not in known]:
        print(f"{missing}: not registered on this branch (registered: {', '.join(known)}); skipped")
    if not chosen:
        return 1

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-cost-"))
    services = Services.create(AppSettings(data_dir=data_dir), with_store=False)
    services.ensure_corpus(args.corpus)
    services.chat_override = ServedLikeFake(overhead_s=args.overhead, tokens_per_s=args.tokens_per_s)
    base = RunConfig().with_backend("fake").model_copy(update={"corpus": args.corpus})
    base = base.model_copy(update={"retrieval": base.retrieval.model_copy(update={"web_search": False})})
    for role in ("debater", "judge", "scorer"):
        base = base.model_copy(update={role: base.role(role).model_copy(update={"concurrency": args.concurrency})})

    print(
        f"fake backend timed like a served model: {args.overhead}s per call + 1 s per {args.tokens_per_s:g} output tokens, "
        f"{args.concurrency} calls at once per backend; corpus {args.corpus}; web off; {len(args.claims)} claims\n"
    )
    runs: dict[str, list[ClaimRun]] = defaultdict(list)
    for claim in args.claims:
        for protocol in chosen:
            run = run_claim(protocol, claim, services, base)
            runs[protocol].append(run)
            print(
                f"  {protocol:<10} {run.total.calls:>4} calls {run.total.tokens_in:>7,} tok in {run.total.tokens_out:>6,} tok out "
                f"{run.wall_s:>6.1f} s  {run.verdict}  | {claim}"
            )

    print("\nPer claim (mean over the claims)")
    print("| protocol | model calls | tokens in | tokens out | wall time (s) | model time (s) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    means: dict[str, dict[str, float]] = {}
    for protocol in chosen:
        rs = runs[protocol]
        means[protocol] = {
            "calls": statistics.mean(r.total.calls for r in rs),
            "in": statistics.mean(r.total.tokens_in for r in rs),
            "out": statistics.mean(r.total.tokens_out for r in rs),
            "wall": statistics.mean(r.wall_s for r in rs),
            "model": statistics.mean(r.total.model_seconds for r in rs),
        }
        m = means[protocol]
        print(f"| {protocol} | {m['calls']:.1f} | {m['in']:,.0f} | {m['out']:,.0f} | {m['wall']:.1f} | {m['model']:.1f} |")
    if len(chosen) > 1:
        first, *others = chosen
        for other in others:
            a, b = means[first], means[other]
            print(
                f"\n{first} / {other}: {a['calls'] / b['calls']:.2f}x calls, {a['in'] / b['in']:.2f}x tokens in, "
                f"{a['out'] / b['out']:.2f}x tokens out, {a['wall'] / b['wall']:.2f}x wall time"
            )

    for protocol in chosen:
        stages: dict[str, Cost] = defaultdict(Cost)
        for r in runs[protocol]:
            for name, cost in r.by_stage.items():
                stages[name] += cost
        n = len(runs[protocol])
        print(f"\n{protocol}: where the cost goes (per claim)")
        print("| stage | calls | tokens in | tokens out | model time (s) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, cost in sorted(stages.items(), key=lambda kv: -kv[1].tokens_in):
            print(
                f"| {name} | {cost.calls / n:.1f} | {cost.tokens_in / n:,.0f} | {cost.tokens_out / n:,.0f} | {cost.model_seconds / n:.1f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
