"""`toolmad`: Tool-MAD. A RAG debater (local corpus) and a Search debater (web) argue round by round.

As published, every number from ``RunConfig.toolmad``:
1. Round 1: each debater writes a query from the claim alone, retrieves its top k with its
   own tool, and answers (reasoning, then a label line).
2. Rounds 2..T: each sees the opponent's previous answer and its own previous query, keeps
   or rewrites the query, retrieves again and answers.
3. After every answer: faithfulness F against that debater's evidence and answer relevance
   AR against the claim (``stages.scoring``).
4. Stop early when both labels agree and both answers pass F and AR (0.7 and 0.5 by default:
   AR's 0.5 is the paper's 0.8 moved to MiniLM's scale) that round; otherwise, after round T, a judge rules from the claim, the whole history
   (answers and evidence) and each debater's mean F and AR.
The two debaters of a round run concurrently, and so do the score computations. After each
round the step-mode hook (``ctx.review``) may edit the next queries, strike evidence or
stop the debate. A failed model call becomes a StageFailed event: a failed query falls
back to the previous one, a failed score counts as not passing, a failed answer leaves
that debater out of the round (no consensus that round; the other goes on).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from pipelines.core.domain import Evidence, Label, Turn, Verdict
from pipelines.core.errors import DebateDeskError, StageFailedError
from pipelines.core.events import RoundStarted, StageCompleted, StageFailed, StageStarted
from pipelines.prompts import load_prompt
from pipelines.protocols.toolmad.settings import ToolMadConfig
from pipelines.run.context import Review, RunContext
from pipelines.stages.argument import named_labels, stream_turn, strip_label_line
from pipelines.stages.belief import read_belief
from pipelines.stages.query_formulation import same_query
from pipelines.stages.retrieval import Tool, format_evidence, retrieve
from pipelines.stages.scoring import AnswerScores, Thresholds, score_answer

JUDGE = "Judge"
FailureSink = Callable[[str, DebateDeskError, str], None]  # (stage, error, what the run does instead)


class NextQuery(BaseModel):
    """A debater's search query for its next retrieval."""

    query: str = Field(min_length=1, max_length=300)


@dataclass(frozen=True)
class DebaterRole:
    """A debater as data: its name, its tool, how prompts describe the tool, and which option sets its k."""

    name: str
    tool: Tool
    tool_description: str
    top_k_option: str
    fallback_to_corpus: bool = False

    def top_k(self, cfg: ToolMadConfig) -> int:
        return int(getattr(cfg, self.top_k_option))


RAG = DebaterRole(name="RAG", tool="corpus", tool_description="a search of the desk's local document collection", top_k_option="rag_top_k")
SEARCH = DebaterRole(
    name="Search", tool="web", tool_description="a web search engine", top_k_option="search_top_k", fallback_to_corpus=True
)
ROLES: tuple[DebaterRole, DebaterRole] = (RAG, SEARCH)


@dataclass
class DebaterState:
    """What one debater has done so far."""

    role: DebaterRole
    query: str = ""
    rewritten: bool = False
    turns: dict[int, Turn] = field(default_factory=dict)
    scores: dict[int, AnswerScores] = field(default_factory=dict)
    evidence: dict[int, list[Evidence]] = field(default_factory=dict)
    queries: dict[int, str] = field(default_factory=dict)
    extra_queries: tuple[str, ...] = ()  # the checker's additional queries for the next round

    def last_turn(self, before: int | None = None) -> Turn | None:
        rounds = [r for r in self.turns if before is None or r < before]
        return self.turns[max(rounds)] if rounds else None

    def mean(self, metric: str) -> float | None:
        values = [getattr(s, metric) for s in self.scores.values() if getattr(s, metric) is not None]
        return sum(values) / len(values) if values else None


async def run_toolmad(ctx: RunContext) -> Verdict:
    """Debate round by round until a grounded consensus, the checker's stop, or round T; then the judge."""
    cfg = ctx.config.toolmad
    thresholds = Thresholds(faithfulness=cfg.faithfulness_threshold, relevance=cfg.relevance_threshold)
    debaters = [DebaterState(role) for role in ROLES]
    failures: list[str] = []

    def failed(stage: str, exc: DebateDeskError, then: str) -> None:
        failures.append(f"{stage}: {exc}")
        ctx.emit(StageFailed(stage=stage, reason=f"{exc}; {then}"))

    stop_reason = ""
    last_round = 0
    for number in range(1, cfg.rounds + 1):
        last_round = number
        ctx.emit(RoundStarted(round=number))
        if number == 1:
            await asyncio.gather(*(_first_query(ctx, d, failed) for d in debaters))
            # Step mode: the checker sees the first queries before any search (a stop here is not taken: nothing is argued yet).
            _apply_review(await ctx.review(0, {d.role.name: d.query for d in debaters}), debaters)
        # Each debater searches after the one before it has (a corpus search takes milliseconds),
        # then all answer at once: evidence ids follow the debaters' order, not which search
        # finished first, so a repeated run builds the same prompts (and replays from the cache).
        searched = [asyncio.Event() for _ in debaters]
        await asyncio.gather(
            *(
                _debate_turn(ctx, d, _opponent(debaters, d), number, thresholds, failed, searched[i], searched[i - 1] if i else None)
                for i, d in enumerate(debaters)
            )
        )

        answered = [d for d in debaters if number in d.turns]
        await read_belief(ctx, round=number, turns=_history(debaters), evidence=_evidence(ctx, debaters), what=f"after round {number}")
        if not answered:
            ctx.emit(StageFailed(stage=f"round {number}", reason="neither debater could answer; the debate ends here"))
            break
        if cfg.early_stop and _consensus(debaters, number, thresholds):
            return _consensus_verdict(debaters, number, thresholds)
        if number == cfg.rounds:
            await ctx.review(number, {})  # a last look before the judge: what the checker strikes stays away from it
            break
        await asyncio.gather(*(_next_query(ctx, d, _opponent(debaters, d), number, failed) for d in debaters))
        review = await ctx.review(number, {d.role.name: d.query for d in debaters})
        _apply_review(review, debaters)
        if review.stop:
            stop_reason = f"the checker stopped the debate after round {number}"
            break

    if not any(d.turns for d in debaters):
        raise StageFailedError("debate", "no debater produced an answer (" + "; ".join(failures[:2]) + ")")
    return await _judge(ctx, debaters, last_round, thresholds, stop_reason)


def _history(debaters: list[DebaterState]) -> list[Turn]:
    """Every answer so far, round by round, in the debaters' order."""
    return [d.turns[n] for n in sorted({n for d in debaters for n in d.turns}) for d in debaters if n in d.turns]


def _evidence(ctx: RunContext, debaters: list[DebaterState]) -> list[Evidence]:
    """What the debaters retrieved, each item once, less what the checker struck."""
    return ctx.usable(list({e.id: e for d in debaters for items in d.evidence.values() for e in items}.values()))


def _argued_evidence(evidence: list[Evidence], turns: list[Turn]) -> list[Evidence]:
    """What the judge reads: the items the debaters cited (in the order they were found), or every item when none was cited.

    Every item of three rounds was most of the judge's reading (1,900-2,300 tokens of a forced debate's 12,000-15,000 on
    the embedded model), while the debaters cited one or two of them; the debate is about the cited ones.
    """
    cited = {c for turn in turns for c in turn.cited}
    argued = [e for e in evidence if e.id in cited]
    return argued or evidence


def _opponent(debaters: list[DebaterState], me: DebaterState) -> DebaterState:
    return next(d for d in debaters if d is not me)


async def _first_query(ctx: RunContext, me: DebaterState, failed: FailureSink) -> None:
    """Round 1's query, from the claim alone; the claim itself when the model gives none."""
    stage = f"{me.role.name} round 1 query"
    ctx.emit(StageStarted(stage=stage, detail=f"{me.role.name} writes a {me.role.tool} query from the claim"))
    messages = load_prompt("toolmad_query", __package__).render(claim=ctx.claim.text, tool=me.role.tool_description)
    try:
        me.query = (await ctx.llm("debater").structured(messages, NextQuery)).query.strip()
    except DebateDeskError as exc:
        failed(stage, exc, "searching with the claim itself")
    me.query = me.query or ctx.claim.text[:300]
    ctx.emit(StageCompleted(stage=stage, detail=me.query))


async def _next_query(ctx: RunContext, me: DebaterState, opponent: DebaterState, number: int, failed: FailureSink) -> None:
    """Keep or rewrite the query for round ``number + 1`` from the opponent's latest answer and our own query."""
    their = opponent.last_turn()
    stage = f"{me.role.name} round {number + 1} query"
    if their is None:  # nothing to react to: keep searching as before
        me.rewritten = False
        return
    ctx.emit(StageStarted(stage=stage, detail=f"{me.role.name} keeps or rewrites its query after {opponent.role.name}'s answer"))
    messages = load_prompt("toolmad_rewrite", __package__).render(
        claim=ctx.claim.text,
        tool=me.role.tool_description,
        previous_query=me.query,
        opponent=opponent.role.name,
        opponent_answer=_answer_for_prompt(their),
    )
    previous = me.query
    try:
        proposed = (await ctx.llm("debater").structured(messages, NextQuery)).query.strip()
    except DebateDeskError as exc:
        failed(stage, exc, "keeping the previous query")
        proposed = previous
    me.query = proposed or previous
    me.rewritten = not same_query(previous, me.query)
    ctx.emit(StageCompleted(stage=stage, detail=("rewritten: " if me.rewritten else "kept: ") + me.query))


def _apply_review(review: Review, debaters: list[DebaterState]) -> None:
    """The checker's edits to the next queries replace the debaters' own; extra queries go to both debaters."""
    for d in debaters:
        edited = (review.queries.get(d.role.name) or "").strip()
        if edited and edited != d.query:
            d.query = edited
            d.rewritten = not same_query(d.queries[max(d.queries)], edited) if d.queries else True
        d.extra_queries = tuple(q.strip() for q in review.extra_queries if q.strip())


async def _debate_turn(
    ctx: RunContext,
    me: DebaterState,
    opponent: DebaterState,
    number: int,
    thresholds: Thresholds,
    failed: FailureSink,
    searched: asyncio.Event,
    after: asyncio.Event | None = None,
) -> None:
    """Retrieve with this debater's tool, stream its answer, then score it (F and AR at once).

    ``searched`` is set once this debater's finds are in the pool; ``after``, the debater
    before it's, is awaited first, so evidence ids never depend on which search was faster.
    """
    cfg = ctx.config.toolmad
    role = me.role
    evidence = await _search(ctx, me, number, searched, after)
    me.evidence[number] = evidence

    stage = f"{role.name} round {number} answer"
    ctx.emit(StageStarted(stage=stage, detail=f"{role.name} argues from {len(evidence)} evidence item(s)"))
    their = opponent.last_turn(before=number)
    # The opponent's answer as its checked points, before the evidence: handed the answer's text, a weak model writes it
    # again (the embedded model did in 19 of 20 later turns); its points with what they rest on are to be answered.
    debate = (
        f"\nYour opponent ({opponent.role.name}) last round:\n{_points_for_prompt(their, opponent.scores.get(their.round))}\n"
        if their
        else ""
    )
    messages = load_prompt("toolmad_answer", __package__).render(
        claim=ctx.claim.text,
        role=f"the {role.name} debater",
        tool=role.tool_description,
        evidence=format_evidence(evidence, max_chars=cfg.evidence_chars),
        debate=debate,
    )
    try:
        turn = await stream_turn(ctx, agent=role.name, round=number, messages=messages, query=me.query)
    except DebateDeskError as exc:
        failed(stage, exc, f"{role.name} sits out round {number}; what it wrote so far stays above")
        return
    me.turns[number] = turn
    ctx.emit(StageCompleted(stage=stage, detail=turn.label or "no label line"))

    me.scores[number] = await score_answer(
        ctx,
        turn,
        evidence,
        thresholds=thresholds,
        max_statements=cfg.max_statements,
        questions=cfg.relevance_questions,
        evidence_chars=cfg.evidence_chars,
        reader=cfg.faithfulness_reader,
    )


async def _search(ctx: RunContext, me: DebaterState, number: int, searched: asyncio.Event, after: asyncio.Event | None) -> list[Evidence]:
    """This debater's evidence for round ``number``: its query's finds (round 1 of a grounded run: desk's exhibits), the
    checker's extra queries' and what the checker added, less what they struck.

    ``searched`` is set once the finds are in the pool, even when a search fails; ``after`` is awaited first.
    """
    cfg = ctx.config.toolmad
    role = me.role
    me.queries[number] = me.query
    found: dict[str, Evidence] = {}
    try:
        if after is not None:
            await after.wait()
        queries = [(me.query, me.rewritten), *((q, False) for q in me.extra_queries if q != me.query)]
        me.extra_queries = ()
        exhibits = ctx.exhibits if number == 1 and role.tool == "corpus" else []  # grounded (belief.grounded): round 1 argues from them
        if exhibits:
            found = {e.id: e for e in exhibits[: role.top_k(cfg)]}
            queries = queries[1:]  # the checker's extra queries are still searched
        for position, (query, rewritten) in enumerate(queries):
            for e in await retrieve(
                ctx,
                agent=role.name,
                round=number,
                query=query,
                tool=role.tool,
                k=role.top_k(cfg),
                rewritten=rewritten,
                fallback_to_corpus=role.fallback_to_corpus,
                with_rewrites=number == 1 and position == 0 and not exhibits,  # round 1 searches for the claim: its rewrites join
            ):
                found[e.id] = e
    finally:
        searched.set()
    added = [e for e in ctx.pool.values() if e.source == "user"]
    return ctx.usable([*found.values(), *(e for e in added if e.id not in found)])


def _points_for_prompt(turn: Turn, scores: AnswerScores | None) -> str:
    """The opponent's answer as the statements faithfulness checked, each with what it rests on; its text when unchecked."""
    checked = scores.faithfulness.statements if scores is not None and scores.faithfulness is not None else ()
    if not checked:
        return _answer_for_prompt(turn)
    points = "\n".join(
        f"- {s.text} ({f'rests on [{s.evidence_id}]' if s.supported and s.evidence_id else 'not supported by their evidence'})"
        for s in checked
    )
    label = f"Their label: {turn.label}\n" if turn.label else ""
    return f"{label}Their points, each checked against their evidence:\n{points}"


def _answer_for_prompt(turn: Turn) -> str:
    label = f"\n(Their label: {turn.label})" if turn.label else ""
    return strip_label_line(turn.text) + label


def _consensus(debaters: list[DebaterState], number: int, thresholds: Thresholds) -> bool:
    """Both answered this round with the same label, and both answers pass F and AR."""
    turns = [d.turns.get(number) for d in debaters]
    if any(t is None or t.label is None for t in turns):
        return False
    labels = {t.label for t in turns if t is not None}
    return len(labels) == 1 and all(d.scores[number].passes(thresholds) for d in debaters)


def _scores_text(scores: AnswerScores | None, thresholds: Thresholds) -> str:
    if scores is None:
        return "not scored"
    f = (
        "F failed"
        if scores.f is None
        else f"F {scores.f:.2f}{'≥' if scores.f >= thresholds.faithfulness else '<'}{thresholds.faithfulness:.2f}"
    )
    ar = (
        "AR failed"
        if scores.ar is None
        else f"AR {scores.ar:.2f}{'≥' if scores.ar >= thresholds.relevance else '<'}{thresholds.relevance:.2f}"
    )
    return f"{f}, {ar}"


def _consensus_verdict(debaters: list[DebaterState], number: int, thresholds: Thresholds) -> Verdict:
    turns = [d.turns[number] for d in debaters]
    label: Label = turns[0].label or "NOT ENOUGH INFO"
    detail = "; ".join(f"{d.role.name} {_scores_text(d.scores[number], thresholds)}" for d in debaters)
    return Verdict(
        label=label,
        rationale="\n\n".join(f"{t.agent}: {strip_label_line(t.text)}" for t in turns),
        cited=tuple(dict.fromkeys(c for t in turns for c in t.cited)),
        decided_by="consensus",
        stop_reason=f"consensus in round {number}: both debaters say {label} with grounded, relevant answers ({detail})",
    )


def _why_no_consensus(debaters: list[DebaterState], number: int, thresholds: Thresholds) -> str:
    parts = []
    for d in debaters:
        turn = d.turns.get(number)
        if turn is None:
            parts.append(f"{d.role.name} gave no answer")
        else:
            parts.append(f"{d.role.name} {turn.label or 'no label'} ({_scores_text(d.scores.get(number), thresholds)})")
    return f"round {number}: " + "; ".join(parts)


async def _judge(ctx: RunContext, debaters: list[DebaterState], last_round: int, thresholds: Thresholds, stop_reason: str) -> Verdict:
    """The judge rules from the claim, the whole history (answers and evidence) and each debater's mean F and AR."""
    cfg = ctx.config.toolmad
    why = stop_reason or f"no consensus after {last_round} round(s)"
    state = _why_no_consensus(debaters, last_round, thresholds)
    means = "; ".join(_mean_text(d) for d in debaters)
    evidence = _argued_evidence(_evidence(ctx, debaters), _history(debaters))
    history = []
    for number in range(1, last_round + 1):
        for d in debaters:
            turn = d.turns.get(number)
            if turn is None:
                history.append(f"Round {number}, {d.role.name}: (no answer)")
                continue
            history.append(
                f"Round {number}, {d.role.name} (query: {d.queries.get(number, '')!r}; {_scores_text(d.scores.get(number), thresholds)}):\n"
                f"{_answer_for_prompt(turn)}"
            )
    messages = load_prompt("toolmad_judge", __package__).render(
        claim=ctx.claim.text,
        rounds=last_round,
        evidence=format_evidence(evidence, max_chars=cfg.judge_evidence_chars),
        history="\n\n".join(history),
        scores="\n".join(_mean_text(d) for d in debaters),
    )
    ctx.emit(StageStarted(stage="judge", detail=f"{why}; the judge rules"))
    try:
        turn = await stream_turn(ctx, agent=JUDGE, round=0, messages=messages, role="judge")
    except DebateDeskError as exc:
        ctx.emit(StageFailed(stage="judge", reason=f"{exc}; falling back to the debaters' last labels"))
        return _fallback_verdict(debaters, f"{why} ({state}); the judge failed ({exc})")
    # A self-contradicting ruling keeps its last label line (the rule for every answer), and says so where the checker reads.
    named = named_labels(turn.text)
    detail: str = turn.label or "no label line"
    conflict = ""
    if len(named) > 1:
        detail += f" (its answer also names {', '.join(n for n in named if n != turn.label)})"
        conflict = f"; the judge's answer names {' and '.join(named)}: its last label line counts"
    ctx.emit(StageCompleted(stage="judge", detail=detail))
    label: Label = turn.label or "NOT ENOUGH INFO"
    no_label = "" if turn.label else "; the judge gave no label line, recorded as NOT ENOUGH INFO"
    return Verdict(
        label=label,
        rationale=strip_label_line(turn.text),
        cited=turn.cited,
        decided_by="judge",
        stop_reason=f"{why} ({state}); the judge ruled on the history and the mean scores ({means}){no_label}{conflict}",
    )


def _mean_text(d: DebaterState) -> str:
    f, ar = d.mean("f"), d.mean("ar")
    shown = lambda v: "n/a" if v is None else f"{v:.2f}"  # noqa: E731
    return f"{d.role.name}: mean F {shown(f)}, mean AR {shown(ar)} over {len(d.turns)} answer(s)"


def _fallback_verdict(debaters: list[DebaterState], reason: str) -> Verdict:
    """Without a judge: the debaters' latest labels if both answered and agree, else NOT ENOUGH INFO."""
    labels = [t.label if t else None for t in (d.last_turn() for d in debaters)]
    agreed = labels[0] if len(set(labels)) == 1 else None
    label: Label = agreed or "NOT ENOUGH INFO"
    return Verdict(label=label, rationale="", decided_by="fallback", stop_reason=reason + f"; the debaters' latest labels give {label}")
