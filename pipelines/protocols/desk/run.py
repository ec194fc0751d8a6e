"""`desk`: the product's default, built for a weak local model. Exhibits, stances read from probabilities, a calibrated verdict.

1. Exhibits: hybrid search for the claim (and for model rewrites of it, and the web when on),
   at most ``desk.exhibits`` distinct passages, each with the sentences closest to the claim.
2. Stances: for each exhibit, the model's probabilities that it supports, contradicts or does
   not address the claim, read from the answer letters' log-probabilities and averaged over
   option orders (stages/stance.py): never parsed from prose. ``desk.reader`` picks the
   question: ``separate`` reads the exhibit against the claim (and its opposite); ``contrast``
   asks which of the claim and its opposite it supports, or neither (the default: 2 calls an
   exhibit, so 25 exhibits fit in the time); ``both`` asks the separate questions and weighs
   the contrast one in.
3. Verdict: the stances combined and calibrated on Check-COVID train claims for the model
   (stages/stance_aggregation.py); NOT ENOUGH INFO when nothing addresses the claim or
   neither side is strong enough.
4. A debate only where it adds: when strong exhibits point both ways, an advocate for each
   side argues from its exhibits and the contested exhibits are read again with both
   arguments in view; when the exhibits agree, no debate, and the run says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.core.domain import Turn, Verdict
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import RoundStarted, StageCompleted, StageFailed, StageStarted
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import READ_AGAIN, read_belief, weighed_belief
from pipelines.stages.exhibit_reading import WEIGHED, Reading, read_exhibits, reread_contested
from pipelines.stages.retrieval import format_evidence
from pipelines.stages.stance_aggregation import Aggregate

ADVOCATES = (  # (name, the stance it argues from, its brief)
    ("Advocate for", "SUPPORTS", "Argue that the exhibits show the claim is true."),
    ("Advocate against", "REFUTES", "Argue that the exhibits show the claim is false."),
)


async def run_desk(ctx: RunContext) -> Verdict:
    cfg = ctx.config.desk
    reading = await read_exhibits(ctx)
    result = reading.result

    # 4. a debate only where strong exhibits conflict (the belief read before it, and after)
    await _belief(ctx, reading, result, round=0, turns=[], what="from the exhibits alone")
    debated = False
    if result.conflict and cfg.debate:
        result = await _debate(ctx, reading)
        debated = True
    elif result.conflict:
        ctx.emit(StageCompleted(stage="debate", detail="strong exhibits point both ways, but the debate is switched off"))
    else:
        ctx.emit(StageCompleted(stage="debate", detail="no debate: " + _why_no_debate(result)))

    return result.verdict(
        decided_by=WEIGHED if result.calibration != "uncalibrated" else "exhibit stances (uncalibrated)",
        stop_reason="ruled after a debate over conflicting exhibits" if debated else "ruled from the exhibits' stances",
    )


async def _debate(ctx: RunContext, reading: Reading) -> Aggregate:
    """Each side argues from its strong exhibits; the contested exhibits are then read again with both arguments in view."""
    cfg = ctx.config.desk
    first, stances = reading.result, reading.stances
    by_id = reading.read_as
    ctx.emit(RoundStarted(round=1))
    ctx.emit(StageStarted(stage="debate", detail=f"strong exhibits point both ways ({', '.join(first.contested)}): each side argues"))
    arguments: list[tuple[str, str]] = []
    turns: list[Turn] = []
    for name, side, brief in ADVOCATES:
        own = [by_id[i] for i in first.contested if stances[i].leaning == side]
        other = [by_id[i] for i in first.contested if stances[i].leaning != side]
        messages = load_prompt("desk_advocate", __package__).render(
            claim=ctx.claim.text, side=name, brief=brief, exhibits=format_evidence(own), opposing=format_evidence(other)
        )
        try:
            turn = await stream_turn(ctx, agent=name, round=1, messages=messages, max_tokens=cfg.argument_tokens)
        except ModelOutputError as exc:
            ctx.emit(StageFailed(stage="debate", reason=f"{name}: {exc}"))
            continue
        arguments.append((name, turn.text))
        turns.append(turn)
    ctx.emit(
        StageCompleted(
            stage="debate", detail=f"{len(arguments)} of {len(ADVOCATES)} advocates argued; the contested exhibits are read again"
        )
    )
    weighed = _weighed(ctx, reading)
    if not weighed:  # the judge is asked (before the contested exhibits are read again, as it was)
        await read_belief(ctx, round=1, turns=turns, evidence=reading.ranked, what="after the debate")
    if not arguments:
        if weighed:
            await weighed_belief(ctx, round=1, result=first, exhibits=reading.exhibits, what="after the debate (no argument made)")
        return first
    result = await reread_contested(ctx, reading, arguments)
    if weighed:
        await weighed_belief(
            ctx, round=1, result=result, exhibits=reading.exhibits, what=f"after the debate, the contested exhibits {READ_AGAIN}"
        )
    return result


def _weighed(ctx: RunContext, reading: Reading) -> bool:
    """Whether desk's belief is its calibrated weighing of the exhibits (belief.desk_weighed, and a calibration to weigh with)."""
    return ctx.config.belief.desk_weighed and reading.calibration is not None


async def _belief(ctx: RunContext, reading: Reading, result: Aggregate, *, round: int, turns: Sequence[Turn], what: str) -> None:
    """Desk's belief: its calibrated weighing of the exhibits where it has a calibration, else the judge asked over them."""
    if _weighed(ctx, reading):
        await weighed_belief(ctx, round=round, result=result, exhibits=reading.exhibits, what=what)
    else:
        await read_belief(ctx, round=round, turns=turns, evidence=reading.ranked, what=what)


def _why_no_debate(result: Aggregate) -> str:
    if not result.contested:
        return "no exhibit is strong for either side"
    return "the strong exhibits all point the same way"
