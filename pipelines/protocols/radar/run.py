"""`radar`: half-truth detection. A Politician and a Scientist debate over one shared evidence set.

1. The top ``radar.top_k`` passages (20) are retrieved once for the claim; both agents share them.
2. Opening, rebuttal (each sees the other's opening), closing; the Scientist marks the
   context the claim leaves out ("Omitted:" lines), shown to the checker as its own list.
3. After the opening and after the rebuttal a stop agent and a round judge run: stop margin
   s = p(STOP) - p(CONTINUE), verdict confidence c = max label probability, both from label
   probabilities (token log-probabilities, or sampling where the backend gives none). The
   debate stops only if s >= tau_s and c >= tau_v; the round judge's verdict is then final.
4. Otherwise the judge rules after the closing. Labels: TRUE / HALF-TRUE / FALSE.

Every call opens with the same block (``shared_context``: the evidence, the claim, the debate
so far), its own instructions after it, so the server's prompt cache reads each part once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from pipelines.core.domain import Evidence, Turn, Verdict, citations
from pipelines.core.errors import ModelOutputError, StageFailedError
from pipelines.core.events import OmittedContextFound, RoundStarted, StageCompleted, StageFailed, StageStarted, StopRuleChecked
from pipelines.core.personas import POLITICIAN, SCIENTIST, Persona
from pipelines.prompts import load_prompt
from pipelines.protocols.radar import PROTOCOL
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import read_belief
from pipelines.stages.debate_history import format_history
from pipelines.stages.label_probability import LabelDistribution, estimate_label_probabilities, report
from pipelines.stages.retrieval import exhibits_as_shared_evidence, format_evidence, retrieve_for_claim

LABELS = PROTOCOL.labels  # its verdicts (protocol.toml)
STOP_OPTIONS = ("STOP", "CONTINUE")
PHASES = ("opening", "rebuttal", "closing")
STAGE_NAMES = dict(enumerate(PHASES, start=1))
TASKS = {
    "opening": "Give your opening statement.",
    "rebuttal": "Rebut the other side's opening statement: answer its strongest points with the evidence.",
    "closing": "Give your closing statement: what the debate has established about the claim.",
}
AGENTS: tuple[Persona, ...] = (POLITICIAN, SCIENTIST)
RETRIEVER = "RADAR"
STOP_AGENT = "Stop agent"
ROUND_JUDGE = "Round judge"
JUDGE = "Judge"
_OMITTED = re.compile(r"^\W*omitted(?:\s+context)?\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def should_stop(stop_margin: float, confidence: float, tau_s: float, tau_v: float) -> bool:
    """RADAR's dual-threshold rule: stop only when both the stop margin and the verdict confidence clear their thresholds."""
    return stop_margin >= tau_s and confidence >= tau_v


def stop_margin(stop: LabelDistribution) -> float:
    """s = p(STOP) - p(CONTINUE)."""
    return round(stop.p("STOP") - stop.p("CONTINUE"), 4)


def omitted_points(text: str) -> list[str]:
    """The "Omitted: ..." lines of a Scientist's turn."""
    return [m.strip() for m in _OMITTED.findall(text) if m.strip()]


@dataclass(frozen=True)
class RoundAssessment:
    """What the stop agent and the round judge made of one round."""

    stop_margin: float
    judge: LabelDistribution
    stop: bool


async def run_radar(ctx: RunContext) -> Verdict:
    cfg = ctx.config.radar
    evidence = await _shared_evidence(ctx)
    history: list[Turn] = []
    decided: LabelDistribution | None = None
    stop_reason = ""
    for number, phase in enumerate(PHASES, start=1):
        ctx.emit(RoundStarted(round=number))
        ctx.emit(StageStarted(stage=phase, detail=f"{phase}: the Politician and the Scientist speak"))
        shown = ctx.usable(evidence)
        turns = await asyncio.gather(*(_speak(ctx, role, number, phase, shown, history) for role in AGENTS))
        history.extend(turns)
        _report_omissions(ctx, turns)
        ctx.emit(StageCompleted(stage=phase))
        await read_belief(ctx, round=number, turns=history, evidence=evidence, what=f"after the {phase}", stage_names=STAGE_NAMES)
        if phase == "closing":
            break
        if cfg.early_stop:
            assessment = await _assess(ctx, number, phase, ctx.usable(evidence), history)
            if assessment is not None and assessment.stop:
                decided = assessment.judge
                stop_reason = (
                    f"stopped early after the {phase}: stop margin s={assessment.stop_margin:+.2f} ≥ τs={cfg.tau_s:+.2f} and "
                    f"confidence c={decided.confidence:.2f} ≥ τv={cfg.tau_v:.2f}; the round judge's verdict is final"
                )
                break
        review = await ctx.review(number, {})
        if review.stop:
            stop_reason = f"the checker stopped the debate after the {phase}; the judge ruled on it"
            break
    if decided is None:
        decided = await _final_ruling(ctx, ctx.usable(evidence), history, round=len({t.round for t in history}))
        stop_reason = stop_reason or f"the judge ruled after the closing statements (confidence {decided.confidence:.2f})"
    explanation = await _explain(ctx, ctx.usable(evidence), history, decided.label) if cfg.explain_verdict else None
    return Verdict(
        label=decided.label,
        confidence=round(decided.confidence, 4),
        rationale=explanation.text if explanation else _plain_rationale(decided),
        cited=explanation.cited if explanation else (),
        decided_by="judge",
        stop_reason=stop_reason,
    )


async def _shared_evidence(ctx: RunContext) -> list[Evidence]:
    cfg = ctx.config
    grounded = exhibits_as_shared_evidence(ctx, cfg.radar.top_k, stage="retrieval", shared_by="all agents")
    if grounded is not None:  # a grounded debate (belief.grounded): desk's exhibits, ranked, are the shared evidence
        return grounded
    use_web = cfg.retrieval.web_search and cfg.radar.web_results > 0
    ctx.emit(
        StageStarted(
            stage="retrieval",
            detail=f"top {cfg.radar.top_k} passages for the claim" + (" and the web" if use_web else "") + ", shared by all agents",
        )
    )
    found = await retrieve_for_claim(ctx, agent=RETRIEVER, corpus_k=cfg.radar.top_k, web_k=cfg.radar.web_results)
    ctx.emit(StageCompleted(stage="retrieval", detail=f"{len(found)} shared evidence items"))
    return found


async def _speak(ctx: RunContext, role: Persona, number: int, phase: str, evidence: Sequence[Evidence], history: Sequence[Turn]) -> Turn:
    messages = load_prompt("radar_turn", __package__).render(
        role=role.name, brief=role.brief, phase=phase, task=TASKS[phase], **shared_context(ctx, evidence, history)
    )
    return await stream_turn(ctx, agent=role.name, round=number, messages=messages)


def shared_context(ctx: RunContext, evidence: Sequence[Evidence], history: Sequence[Turn]) -> dict[str, str]:
    """What every radar prompt opens with, word for word: the shared evidence, the claim, the debate so far.

    The debaters, the stop agent and the judges read the same block (the judges at the debaters' length),
    and each prompt's own instructions come after it, so llama.cpp's prompt cache reads the evidence once
    a debate and each turn once, however many calls follow it.
    """
    return {
        "evidence": format_evidence(list(evidence)),
        "claim": ctx.claim.text,
        "history": format_history(history, stage_names=STAGE_NAMES),
    }


def _report_omissions(ctx: RunContext, turns: Sequence[Turn]) -> None:
    for turn in turns:
        if turn.agent != SCIENTIST.name:
            continue
        for point in omitted_points(turn.text):
            cited = tuple(c for c in citations(point) if c in ctx.pool)
            ctx.emit(OmittedContextFound(agent=turn.agent, round=turn.round, point=point, cited=cited))


async def _assess(
    ctx: RunContext, number: int, phase: str, evidence: Sequence[Evidence], history: Sequence[Turn]
) -> RoundAssessment | None:
    """Stop agent and round judge, side by side; None (the debate goes on) if either gives no usable answer."""
    cfg = ctx.config.radar
    ctx.emit(StageStarted(stage="stop check", detail=f"after the {phase}: stop agent and round judge"))
    variables = {**shared_context(ctx, evidence, history), "phase": phase}
    try:
        stop, judge = await asyncio.gather(
            _estimate(ctx, load_prompt("radar_stop", __package__).render(**variables), STOP_OPTIONS),
            _estimate(ctx, load_prompt("radar_judge", __package__).render(**variables), LABELS),
        )
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage="stop check", reason=f"{exc}; the debate goes on"))
        return None
    report(ctx, stop, agent=STOP_AGENT, round=number)
    report(ctx, judge, agent=ROUND_JUDGE, round=number)
    margin = stop_margin(stop)
    decision = should_stop(margin, judge.confidence, cfg.tau_s, cfg.tau_v)
    ctx.emit(
        StopRuleChecked(
            round=number,
            phase=phase,
            stop_margin=margin,
            verdict_confidence=round(judge.confidence, 4),
            label=judge.label,
            tau_s=cfg.tau_s,
            tau_v=cfg.tau_v,
            stop=decision,
        )
    )
    ctx.emit(StageCompleted(stage="stop check", detail=f"s={margin:+.2f}, c={judge.confidence:.2f} → {'stop' if decision else 'continue'}"))
    return RoundAssessment(stop_margin=margin, judge=judge, stop=decision)


async def _final_ruling(ctx: RunContext, evidence: Sequence[Evidence], history: Sequence[Turn], round: int) -> LabelDistribution:
    ctx.emit(StageStarted(stage="judge", detail="ruling on the whole debate"))
    messages = load_prompt("radar_judge", __package__).render(
        phase=STAGE_NAMES.get(round, "closing"), **shared_context(ctx, evidence, history)
    )
    try:
        judge = await _estimate(ctx, messages, LABELS)
    except ModelOutputError as exc:
        raise StageFailedError("judge", str(exc)) from exc
    report(ctx, judge, agent=JUDGE, round=round)
    ctx.emit(StageCompleted(stage="judge", detail=f"{judge.label} (c={judge.confidence:.2f})"))
    return judge


async def _estimate(ctx: RunContext, messages: Sequence[BaseMessage], options: Sequence[str]) -> LabelDistribution:
    cfg = ctx.config.radar
    return await estimate_label_probabilities(
        ctx.llm("judge"),
        messages,
        options,
        top_logprobs=cfg.top_logprobs,
        samples=cfg.samples,
        temperature=cfg.sample_temperature,
    )


async def _explain(ctx: RunContext, evidence: Sequence[Evidence], history: Sequence[Turn], label: str) -> Turn:
    ctx.emit(StageStarted(stage="explanation", detail=f"the judge explains {label}"))
    messages = load_prompt("radar_explain", __package__).render(label=label, **shared_context(ctx, evidence, history))
    turn = await stream_turn(ctx, agent=JUDGE, round=max((t.round for t in history), default=1), messages=messages, role="judge")
    ctx.emit(StageCompleted(stage="explanation"))
    return turn


def _plain_rationale(decided: LabelDistribution) -> str:
    shares = ", ".join(f"{label} {p:.2f}" for label, p in decided.probabilities.items())
    return f"Judge's label probabilities ({decided.method}): {shares}."
