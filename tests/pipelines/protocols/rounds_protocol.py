"""A small round-based protocol for the durable-run tests: two agents argue concurrently, three rounds, a review after each.

It does what toolmad and proclaim do where it matters here: ``asyncio.gather`` over agents
(with random jitter, so events interleave differently on every attempt), a model call for
each agent's next query, ``ctx.review`` after each round, and it honours the review
(edited and added queries, struck evidence kept from the prompts, stop).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from contextlib import contextmanager

from langchain_core.messages import HumanMessage, SystemMessage

from pipelines.core.domain import Evidence, Turn, Verdict
from pipelines.core.events import RoundStarted
from pipelines.protocols.base import PROTOCOLS, Protocol, register_protocol
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.retrieval import format_evidence, retrieve
from pipelines.stages.schemas import SearchQueries

AGENTS = ("Pro", "Con")
ROUNDS = 3


async def _jitter() -> None:
    await asyncio.sleep(random.random() * 0.02)


async def _argue(ctx: RunContext, agent: str, number: int, query: str, earlier: list[Evidence]) -> Turn:
    await _jitter()
    own = await retrieve(ctx, agent=agent, round=number, query=query, tool="corpus", k=2, rewritten=number > 1)
    await _jitter()
    usable = ctx.usable(list({e.id: e for e in earlier + own}.values()))
    messages = [
        SystemMessage(content=f"You argue as {agent}. Cite evidence as [E1]. End with 'Label: X'."),
        HumanMessage(content=f"Claim: {ctx.claim.text}\nRound {number}.\nEvidence:\n{format_evidence(usable)}"),
    ]
    return await stream_turn(ctx, agent=agent, round=number, messages=messages, query=query)


async def _next_query(ctx: RunContext, agent: str, number: int) -> str:
    await _jitter()
    messages = [HumanMessage(content=f"Claim: {ctx.claim.text}\nWrite {agent}'s next search query after round {number}.")]
    answer = await ctx.llm("debater").structured(messages, SearchQueries)
    return f"{answer.queries[0]} round {number + 1}"


def _by_id(e: Evidence) -> tuple[str, int]:
    return (e.id[0], int(e.id[1:]) if e.id[1:].isdigit() else 0)


async def run_rounds(ctx: RunContext) -> Verdict:
    queries = {"Pro": ctx.claim.text, "Con": f"evidence against: {ctx.claim.text}"}
    turns: list[Turn] = []
    for number in range(1, ROUNDS + 1):
        ctx.emit(RoundStarted(round=number))
        # What both agents found in earlier rounds (plus what the checker pasted), in a stable order: the pool's
        # insertion order depends on which concurrent search finished first, and a prompt must not (for the journal).
        earlier = sorted(ctx.pool.values(), key=_by_id)
        turns = list(await asyncio.gather(*(_argue(ctx, a, number, queries[a], earlier) for a in AGENTS)))
        planned = dict(zip(AGENTS, await asyncio.gather(*(_next_query(ctx, a, number) for a in AGENTS)), strict=True))
        review = await ctx.review(number, planned)
        queries = {a: review.queries.get(a, q) for a, q in planned.items()}
        for query in review.extra_queries:
            await retrieve(ctx, agent="Human checker", round=number, query=query, tool="corpus", k=2)
        if review.stop:
            break
    labels = [t.label for t in turns if t.label]
    label = max(set(labels), key=labels.count) if labels else "NOT ENOUGH INFO"
    cited = tuple(dict.fromkeys(c for t in turns for c in t.cited))
    return Verdict(label=label, rationale=turns[0].text if turns else "", cited=cited, decided_by="agents", stop_reason="test protocol")


PROTOCOL = Protocol(
    name="rounds-test", run=run_rounds, title="Rounds (test)", description="Two agents, three rounds; for the durable-run tests."
)


@contextmanager
def registered() -> Iterator[Protocol]:
    """The protocol is registered only while a test needs it (the app's protocol list stays as shipped)."""
    register_protocol(PROTOCOL)
    try:
        yield PROTOCOL
    finally:
        PROTOCOLS.pop(PROTOCOL.name, None)
