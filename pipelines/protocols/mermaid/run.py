"""`mermaid`: claim triplets, a ReAct loop over tools, and an evidence memory that outlives the run.

1. The claim is decomposed into (subject, relation, object) triplets and a topic (or the
   checker writes them: ``mermaid.triplets`` / ``mermaid.topic``).
2. Evidence kept for earlier claims is recalled by entity match and embedding similarity.
3. A ReAct loop of at most ``mermaid.max_steps`` (5) steps: each step calls one tool (corpus
   search, web search, memory lookup) with a reason, or answers; the step at the cap is a
   forced answer.
4. The evidence the tools found is kept in the memory, with its query, source and time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from pipelines.core.domain import Evidence, Label, Triplet, Turn, Verdict, citations
from pipelines.core.errors import ModelOutputError, ToolUnavailableError
from pipelines.core.events import (
    ClaimDecomposed,
    EvidenceRetrieved,
    MemoryRecalled,
    MemoryUpdated,
    QueryIssued,
    ReasoningStepTaken,
    StageCompleted,
    StageFailed,
    StageStarted,
    TurnCompleted,
)
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.prompts import load_prompt
from pipelines.run.context import OpeningPlan, RunContext
from pipelines.run.tools.memory import EvidenceMemory, Recall, evidence_key
from pipelines.stages.belief import read_belief
from pipelines.stages.decomposition import Decomposition, decompose_claim, parse_triplets
from pipelines.stages.retrieval import format_evidence, retrieve

AGENT = "Researcher"
MEMORY_AGENT = "Memory"
Action = Literal["corpus_search", "web_search", "memory_lookup", "answer"]
NO_STEPS = "(none yet)"
ANSWER_NOW = ' Your steps are used up: answer now (action "answer") from the evidence you have.'
CHECKER_ASKS = ' The checker asks for your answer now: answer (action "answer") from the evidence you have.'


class ReactStep(BaseModel):
    """One ReAct step: a tool call with its query and reason, or the answer."""

    thought: str = Field(default="", description="What you know so far and what is missing.")
    action: Action
    query: str = Field(default="", description="The tool's query (tool calls only).")
    reason: str = Field(default="", description="Why this tool, now (tool calls only).")
    label: Label | None = Field(default=None, description="The label (answer only).")
    answer: str = Field(default="", description="The answer, citing evidence ids (answer only).")
    cited: list[str] = Field(default_factory=list, description="Evidence ids the answer rests on.")


class ForcedAnswer(BaseModel):
    """The answer when the steps are used up."""

    thought: str = ""
    label: Label
    answer: str = ""
    cited: list[str] = Field(default_factory=list)


async def run_mermaid(ctx: RunContext) -> Verdict:
    warming = _Warmer(ctx)
    decomposition, memory, seen = await _start(ctx, warming)
    final, steps, asked = await _react(ctx, decomposition, memory, seen, warming)
    turn = _answer_turn(ctx, final, seen, len(steps) + 1)
    ctx.emit(TurnCompleted(turn=turn))
    await read_belief(ctx, round=turn.round, turns=[turn], evidence=list(seen.values()), what="at the end")
    await warming.done()
    await _keep(ctx, decomposition, seen, turn)
    return Verdict(
        label=turn.label or "NOT ENOUGH INFO",
        rationale=turn.text,
        cited=turn.cited,
        decided_by="agent",
        stop_reason=_stop_reason(len(steps), asked=asked, forced=isinstance(final, ForcedAnswer), cap=ctx.config.mermaid.max_steps),
    )


async def _start(ctx: RunContext, warming: _Warmer) -> tuple[Decomposition, EvidenceMemory | None, dict[str, Evidence]]:
    """The claim's triplets (the checker's rewrite in step mode), the memory, and the evidence the researcher starts from."""
    cfg = ctx.config.mermaid
    if cfg.use_memory and ctx.tools.memory is not None:
        warming.embed([ctx.claim.text])  # the recall below embeds the claim: do it while the model decomposes it
    decomposition = await decompose_claim(ctx, triplets_text=cfg.triplets, topic=cfg.topic)
    # Step mode: the checker sees the triplets before any search and may rewrite them.
    opening = await ctx.review(0, {}, OpeningPlan(kind="triplets", items=tuple(triplet_line(t) for t in decomposition.triplets)))
    if opening.plan is not None:
        decomposition = rewritten(ctx, decomposition, opening.plan)
    memory = _memory(ctx)
    seen: dict[str, Evidence] = {e.id: e for e in opening.added}
    if ctx.exhibits:  # grounded (belief.grounded): the researcher starts from desk's exhibits, ranked, and searches on from there
        seen.update((e.id, e) for e in ctx.exhibits[: ctx.config.retrieval.top_k])
    if memory is not None:
        ctx.emit(StageStarted(stage="memory", detail="recalling evidence kept from earlier claims"))
        recalled = await _recall(ctx, memory, text=ctx.claim.text, entities=decomposition.entities(), step=0)
        seen.update((e.id, e) for e in recalled)
        ctx.emit(StageCompleted(stage="memory", detail=f"{len(recalled)} item{'s' if len(recalled) != 1 else ''} recalled"))
    return decomposition, memory, seen


async def _react(
    ctx: RunContext, decomposition: Decomposition, memory: EvidenceMemory | None, seen: dict[str, Evidence], warming: _Warmer
) -> tuple[ReactStep | ForcedAnswer, list[str], bool]:
    """The ReAct loop: the answer, the steps' log, and whether the checker (step mode) asked for the answer before the cap.

    What the steps find is added to ``seen``.
    """
    cfg = ctx.config.mermaid
    tools = _available_tools(ctx, memory)
    steps: list[str] = []
    searched: list[Evidence] = []  # what the steps found, newest first: the belief reads it before what the researcher started from
    final: ReactStep | ForcedAnswer | None = None
    asked = False
    ctx.emit(StageStarted(stage="reasoning", detail=f"ReAct loop, at most {cfg.max_steps} steps"))
    for step in range(1, cfg.max_steps + 1):
        if step == cfg.max_steps:
            final = await _forced_answer(ctx, decomposition, seen, steps, tools, step)
            break
        try:
            decision = await ctx.llm("debater").structured(_step_prompt(ctx, decomposition, seen, steps, tools, step), ReactStep)
        except ModelOutputError as exc:
            ctx.emit(StageFailed(stage="reasoning", reason=f"step {step}: {exc}; answering with what is known"))
            final = await _forced_answer(ctx, decomposition, seen, steps, tools, step)
            break
        ctx.emit(
            ReasoningStepTaken(
                agent=AGENT, step=step, thought=decision.thought, action=decision.action, query=decision.query, reason=decision.reason
            )
        )
        if decision.action == "answer":
            final = decision
            break
        found = await _use_tool(ctx, memory, decision, tools, step, decomposition)
        seen.update((e.id, e) for e in found)
        searched[:0] = found
        if memory is not None and cfg.remember:  # kept at the end: embed them while the next step is thought out
            warming.embed([e.text for e in found if e.source in ("corpus", "web") and e.text.strip()])
        new = ", ".join(e.id for e in found) or "nothing"
        steps.append(f"Step {step}: {decision.action}({decision.query!r}) -> found {new}")
        if await _checker_step(ctx, step, seen, searched, steps):
            asked = True
            final = await _forced_answer(ctx, decomposition, seen, steps, tools, step + 1, order=CHECKER_ASKS)
            break
    ctx.emit(StageCompleted(stage="reasoning", detail=f"{len(steps)} tool call{'s' if len(steps) != 1 else ''}"))
    assert final is not None
    return final, steps, asked


async def _checker_step(ctx: RunContext, step: int, seen: dict[str, Evidence], searched: list[Evidence], steps: list[str]) -> bool:
    """After a tool call: the checker's say (step mode), then the judge's belief; whether the checker asked for the answer now.

    The checker may strike or add evidence or search a query of their own: what they find and add goes into ``seen``,
    ``searched`` (newest first) and the steps' log.
    """
    review = await ctx.review(step, {})
    for query in review.extra_queries:
        found = await retrieve(ctx, agent=HUMAN_CHECKER, round=step, query=query, tool="corpus", k=ctx.config.retrieval.top_k)
        seen.update((e.id, e) for e in found)
        searched[:0] = found
        steps.append(f"Step {step}: the checker searched {query!r} -> found {', '.join(e.id for e in found) or 'nothing'}")
    seen.update((e.id, e) for e in review.added)
    searched[:0] = review.added
    # The judge's belief on the evidence found so far, this step's finds first: the chart shows which search moved it.
    # (In the order first seen, the exhibits it started from filled the belief's few places and no find was ever read.)
    await read_belief(ctx, round=step, turns=[], evidence=_newest_first(searched, seen), what=f"after step {step}")
    return review.stop


def _stop_reason(calls: int, *, asked: bool, forced: bool, cap: int) -> str:
    """Why the researcher stopped: the checker asked for the answer, the step cap forced it, or it answered on its own."""
    tool_calls = f"{calls} tool call{'s' if calls != 1 else ''}"
    if asked:
        return f"the checker asked for the answer after {tool_calls}"
    if forced:
        return f"forced answer after {tool_calls} (the {cap}-step cap)"
    return f"the researcher answered after {tool_calls}"


class _Warmer:
    """Embeds texts in the background through the run's (caching) embedder, so the memory finds them embedded later.

    Recalling and keeping evidence embed the claim and every item found; done in line, that
    time (a MiniLM pass is 30-300 ms here) came between model calls. Started as soon as the
    texts are known, it runs while the model thinks. A failed warm-up only loses the head start.
    """

    def __init__(self, ctx: RunContext) -> None:
        self._embedder = ctx.tools.embedder
        self._tasks: list[asyncio.Task[object]] = []

    def embed(self, texts: list[str]) -> None:
        if texts:
            self._tasks.append(asyncio.create_task(asyncio.to_thread(self._embedder.embed, texts)))

    async def done(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()


def _newest_first(searched: Sequence[Evidence], seen: dict[str, Evidence]) -> list[Evidence]:
    """Every item seen, those the steps found first (newest step first), then the rest in the order they came."""
    return list({e.id: e for e in [*searched, *seen.values()]}.values())


def _memory(ctx: RunContext) -> EvidenceMemory | None:
    if not ctx.config.mermaid.use_memory:
        return None
    if ctx.tools.memory is None:
        ctx.emit(StageFailed(stage="memory", reason="no run store, so no evidence memory: this claim starts from nothing"))
    return ctx.tools.memory


def _available_tools(ctx: RunContext, memory: EvidenceMemory | None) -> list[str]:
    tools = ["corpus_search"]
    if ctx.config.retrieval.web_search:
        tools.append("web_search")
    if memory is not None and ctx.config.mermaid.memory_tool:
        tools.append("memory_lookup")
    return tools


def _step_prompt(
    ctx: RunContext,
    decomposition: Decomposition,
    seen: dict[str, Evidence],
    steps: Sequence[str],
    tools: Sequence[str],
    step: int,
    now: str = "",
) -> list[BaseMessage]:
    return load_prompt("mermaid_step", __package__).render(
        claim=ctx.claim.text,
        topic=decomposition.topic,
        triplets=_triplet_lines(decomposition),
        tools=", ".join(tools),
        evidence=format_evidence(ctx.usable(list(seen.values()))),
        steps="\n".join(steps) or NO_STEPS,
        step=step,
        max_steps=ctx.config.mermaid.max_steps,
        now=now,
    )


async def _forced_answer(
    ctx: RunContext,
    decomposition: Decomposition,
    seen: dict[str, Evidence],
    steps: Sequence[str],
    tools: Sequence[str],
    step: int,
    order: str = ANSWER_NOW,
) -> ForcedAnswer:
    # The step prompt with the order to answer at its end: the server reuses everything before it (the last step read
    # the same system prompt, claim, evidence and steps), where a prompt of its own was read whole, 1,300 tokens on one claim.
    messages = _step_prompt(ctx, decomposition, seen, steps, tools, step, now=order)
    try:
        answer = await ctx.llm("debater").structured(messages, ForcedAnswer)
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="reasoning", reason=f"forced answer: {exc}; recorded as NOT ENOUGH INFO"))
        answer = ForcedAnswer(thought="", label="NOT ENOUGH INFO", answer="The researcher gave no valid answer.")
    ctx.emit(ReasoningStepTaken(agent=AGENT, step=step, thought=answer.thought, action="answer", forced=True))
    return answer


async def _use_tool(
    ctx: RunContext, memory: EvidenceMemory | None, decision: ReactStep, tools: Sequence[str], step: int, decomposition: Decomposition
) -> list[Evidence]:
    query = decision.query.strip() or ctx.claim.text
    if decision.action not in tools:
        ctx.emit(
            StageFailed(stage="reasoning", reason=f"step {step}: {decision.action} is not available in this run; nothing was searched")
        )
        return []
    if decision.action == "memory_lookup":
        assert memory is not None
        ctx.emit(QueryIssued(agent=AGENT, round=step, query=query, tool="memory"))
        return await _recall(ctx, memory, text=query, entities=[query], step=step)
    tool: Literal["corpus", "web"] = "web" if decision.action == "web_search" else "corpus"
    k = ctx.config.retrieval.web_top_k if tool == "web" else ctx.config.retrieval.top_k
    return await retrieve(ctx, agent=AGENT, round=step, query=query, tool=tool, k=k, fallback_to_corpus=True)


async def _recall(ctx: RunContext, memory: EvidenceMemory, *, text: str, entities: Sequence[str], step: int) -> list[Evidence]:
    cfg = ctx.config.mermaid
    try:
        recalls = await asyncio.to_thread(
            memory.recall,
            text=text,
            entities=entities,
            k=cfg.memory_k,
            min_similarity=cfg.memory_similarity,
            entity_similarity=cfg.memory_entity_similarity,
        )
    except ToolUnavailableError as exc:  # the desk's database away: the researcher goes on without what was kept
        ctx.emit(StageFailed(stage="memory", reason=f"{exc}; {'the claim' if step == 0 else f'step {step}'} goes on without it"))
        return []
    found = []
    for recall in recalls:
        evidence = _into_pool(ctx, recall, step)
        found.append(evidence)
        ctx.emit(
            MemoryRecalled(
                agent=AGENT,
                step=step,
                evidence=evidence,
                match=recall.match,
                score=recall.similarity,
                remembered_at=recall.item.created_at,
                for_claim=recall.item.claim,
            )
        )
    return found


def _into_pool(ctx: RunContext, recall: Recall, step: int) -> Evidence:
    item = recall.item
    for existing in ctx.pool.values():  # already in this run's pool: keep its id
        if evidence_key(existing) == item.key:
            return existing
    evidence = item.as_evidence(
        id=ctx.next_evidence_id(),
        source="memory",
        retrieval_score=recall.similarity,
        scores={"similarity": recall.similarity},
        round=step,
        found_by=MEMORY_AGENT,
    )
    ctx.pool[evidence.id] = evidence
    ctx.emit(EvidenceRetrieved(agent=MEMORY_AGENT, round=step, evidence=evidence))
    return evidence


def _answer_turn(ctx: RunContext, final: ReactStep | ForcedAnswer, seen: dict[str, Evidence], round: int) -> Turn:
    label = final.label or "NOT ENOUGH INFO"
    text = (final.answer.strip() or final.thought.strip() or "No answer text.") + f"\nLabel: {label}"
    cited = tuple(c for c in dict.fromkeys([*final.cited, *citations(final.answer)]) if c in seen)
    return Turn(id=f"{AGENT}-answer", agent=AGENT, round=round, text=text, label=label, cited=cited)


async def _keep(ctx: RunContext, decomposition: Decomposition, seen: dict[str, Evidence], turn: Turn) -> None:
    memory = ctx.tools.memory
    if memory is None or not ctx.config.mermaid.remember:
        return
    found = [e for e in seen.values() if e.source in ("corpus", "web") and e.id not in ctx.struck]
    used = [evidence_key(seen[c]) for c in turn.cited if seen[c].source == "memory"]
    try:
        added, refreshed = await asyncio.to_thread(
            memory.remember, found, claim=ctx.claim.text, topic=decomposition.topic, entities=decomposition.entities(), run_id=ctx.run_id
        )
    except ToolUnavailableError as exc:  # the verdict stands; only the memory for later claims misses this run's evidence
        ctx.emit(StageFailed(stage="memory", reason=f"{exc}; what this run found was not kept for later claims"))
        return
    try:
        await asyncio.to_thread(memory.mark_used, used)
    except ToolUnavailableError as exc:
        ctx.emit(StageFailed(stage="memory", reason=f"{exc}; the recalled items the answer used are not counted as used"))
    ctx.emit(MemoryUpdated(added=added, refreshed=refreshed))


def triplet_line(t: Triplet) -> str:
    """A triplet as the checker edits it: ``subject | relation | object``."""
    return f"{t.subject} | {t.relation} | {t.object}"


def rewritten(ctx: RunContext, decomposition: Decomposition, lines: Sequence[str]) -> Decomposition:
    """The checker's triplets in place of the model's; lines that are not triplets leave the model's as they were (and say why)."""
    try:
        triplets = parse_triplets("\n".join(lines))
    except ValueError as exc:
        ctx.emit(StageFailed(stage="decomposition", reason=f"the checker's triplets were not used: {exc}"))
        return decomposition
    if not triplets:
        return decomposition
    result = Decomposition(topic=decomposition.topic, triplets=tuple(triplets), source="checker")
    ctx.emit(ClaimDecomposed(topic=result.topic, triplets=result.triplets, source=result.source))
    return result


def _triplet_lines(decomposition: Decomposition) -> str:
    return "\n".join(f"- {t}" for t in decomposition.triplets)
