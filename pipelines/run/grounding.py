"""What the runner adds around a debate: a start from desk's exhibits, and a calibrated ruling beside the debate's own.

1. **Grounded** (``belief.grounded``; ``auto``: on for the embedded model): before a debate
   that gathers evidence (its declaration's ``gathers_evidence``) argues, the claim's exhibits and
   their stances are read (``stages/exhibit_reading.read_exhibits``, no step-mode pauses of its own); the
   debate starts from them (``RunContext.exhibits``), so its arguments cite exhibits the
   checker has already seen ranked.
2. **Ruled on the evidence too** (``belief.calibrated_ruling``): where the judge's model has a
   desk calibration, the evidence the debate gathered is weighed as desk weighs its exhibits
   (those desk read when grounded; else the debate's own, at most ``belief.ruling_evidence``,
   read now), the contested ones read again with each side's last argument in view. The
   protocol's ruling (judge, panel, summarizer) is kept; ``belief.verdict`` says which of
   the two is the run's verdict, and the other rides beside it (``Verdict.beside``), so the
   card shows both when they differ.

3. **Debated only where it can change something** (``belief.debate_when``): when desk's exhibits already
   settle the claim (``exhibit_reading.why_settled``: calibrated on measured ground, no conflict, SUPPORTS or
   REFUTES at ``belief.settled_at`` or above), or when the verdict would be their calibrated reading and no
   exhibits are contested, so a debate could not change it (``why_uncontested``), the debate is not run and the
   verdict is their calibrated reading (``settled_verdict``); the run page offers the debate. ``always`` runs it
   whatever they say.

A protocol whose verdict is already the calibrated reading, or a baseline of one answer, declares
``ruled_beside=False``; a debate with no evidence gets neither.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.calibration.files import load_calibration
from pipelines.core.config import RunConfig
from pipelines.core.domain import Ruling, Turn, Verdict
from pipelines.core.events import StageCompleted, StageStarted
from pipelines.core.text.probability import percent
from pipelines.protocols.base import discover, find_protocol
from pipelines.run.context import RunContext
from pipelines.stages.belief import weighed_belief
from pipelines.stages.debate_history import latest_by_agent
from pipelines.stages.exhibit_reading import (
    CALIBRATED,
    SETTLED,
    UNCONTESTED,
    Reading,
    exhibit_settings,
    read_exhibits,
    read_these,
    reread_contested,
    why_settled,
    why_uncontested,
)
from pipelines.stages.stance import argument_text
from pipelines.stages.stance_aggregation import Aggregate
from pipelines.stages.weighing import start_weighing


def grounded(config: RunConfig) -> bool:
    """Whether this run's debate starts from desk's exhibits."""
    mode = config.belief.grounded
    protocol = find_protocol(config.protocol)
    if protocol is None or not protocol.gathers_evidence or mode == "off":
        return False
    return mode == "on" or config.judge.backend == "embedded"


async def ground(ctx: RunContext) -> Reading | None:
    """Desk's exhibits and stances for a grounded debate (None when the run is not grounded); ``ctx.exhibits`` holds them ranked."""
    if not grounded(ctx.config):
        return None
    ctx.emit(StageStarted(stage="grounding", detail="the debate starts from desk's exhibits: each is read for its stance first"))
    reading = await read_exhibits(ctx, review=False)
    ctx.exhibits.extend(reading.ranked)
    order = [e.id for e in reading.exhibits]
    weighed = start_weighing(
        ctx, negation=reading.negation, calibration=reading.calibration, stances=reading.stances, read_as=reading.read_as, order=order
    )
    ctx.emit(StageCompleted(stage="grounding", detail=f"{len(reading.exhibits)} exhibits, ranked by what the verdict would rest on"))
    if weighed is not None:  # where the weighed belief starts: desk's reading of the exhibits (no call)
        await weighed_belief(ctx, round=0, result=reading.result, exhibits=reading.exhibits, what="before the debate: desk's exhibits")
    return reading


NOT_RUN = "not run"  # how the debate stage's line starts when the exhibits settled the claim


def settled_verdict(ctx: RunContext, reading: Reading | None, *, debated_before: bool = False) -> Verdict | None:
    """The verdict when ``belief.debate_when`` lets desk's exhibits stand without a debate: their calibrated reading, and a
    stage line saying the debate was not run and why, with the numbers. None: the debate runs.

    Not run where the exhibits settle the claim (``why_settled``), or where the debate could not change the verdict: the verdict
    would be the calibrated reading (``verdict_is_the_reading``) and no exhibits are contested (``why_uncontested``).
    ``debated_before``: a resumed run whose record already holds debate turns goes on debating, whatever the rule says now.
    """
    cfg = ctx.config.belief
    if reading is None or cfg.debate_when == "always" or debated_before:
        return None
    decided_by = SETTLED
    why = why_settled(reading, ctx.config.corpus, cfg.settled_at)
    if not why and verdict_is_the_reading(ctx.config):
        decided_by, why = UNCONTESTED, why_uncontested(reading)
    if not why:
        return None
    result = reading.result
    ctx.emit(
        StageCompleted(
            stage="debate",
            detail=f"{NOT_RUN}: {why}. The verdict is their calibrated reading; to debate anyway, set belief.debate_when to always",
        )
    )
    return result.verdict(decided_by=decided_by, stop_reason=why)


def rules_beside(config: RunConfig) -> bool:
    """Whether the run's protocol gets a calibrated ruling beside its own (its declaration and ``belief.calibrated_ruling``)."""
    protocol = find_protocol(config.protocol)
    return protocol is not None and protocol.ruled_beside and config.belief.calibrated_ruling


def verdict_is_the_reading(config: RunConfig) -> bool:
    """Whether a grounded debate's verdict would be the calibrated reading (``rule_beside``), its own ruling only shown beside it."""
    return rules_beside(config) and config.belief.verdict == "calibrated"


async def rule_beside(ctx: RunContext, verdict: Verdict, reading: Reading | None, turns: Sequence[Turn]) -> Verdict:
    """The run's verdict: the calibrated ruling or the published one (``belief.verdict``), the other kept beside it."""
    cfg = ctx.config.belief
    if not rules_beside(ctx.config):
        return verdict
    if load_calibration(ctx.llm("judge").model_name, exhibit_settings(ctx.config).reader, ctx.calibration_dir) is None:
        return verdict  # an uncalibrated reading would be no better than the debate's own ruling
    # 1. the evidence: desk's exhibits when the debate started from them, else what the debate gathered
    if reading is None:
        gathered = ctx.usable(list(ctx.pool.values()))
        if not gathered:
            return verdict
        ctx.emit(
            StageStarted(
                stage="ruling", detail=f"reading the stances of the debate's evidence ({min(len(gathered), cfg.ruling_evidence)} items)"
            )
        )
        reading = await read_these(ctx, gathered[: cfg.ruling_evidence], round=1, limit=cfg.ruling_evidence)
        ctx.emit(StageCompleted(stage="ruling"))
    # 2. the contested exhibits read again in the light of both sides' last arguments
    arguments = _last_arguments(turns)
    result = reading.result
    if result.conflict and arguments:
        result = await reread_contested(ctx, reading, arguments, round=2)
    # 3. both rulings, one the verdict and the other beside it
    return choose(verdict, result, cfg.verdict)


def choose(published: Verdict, result: Aggregate, which: str) -> Verdict:
    """The verdict ``which`` names ("calibrated" or "published"), with the other as its ``beside``."""
    own = Ruling(label=published.label, confidence=published.confidence, decided_by=published.decided_by, says=published_says(published))
    calibrated = Ruling(label=result.label, confidence=result.confidence, decided_by=CALIBRATED, says=calibrated_says(result))
    if which == "published":
        return published.model_copy(update={"beside": calibrated})
    return result.verdict(
        decided_by=CALIBRATED,
        stop_reason=f"{own.says}; {calibrated.says}. The calibrated ruling is the verdict (setting: belief.verdict)",
        beside=own,
    )


def published_says(verdict: Verdict) -> str:
    """'the panel voted REFUTED, 64% (2 REFUTED, 1 SUPPORTED)': the protocol's own ruling in words."""
    who = next((said for key, said in decided_by_words().items() if verdict.decided_by.startswith(key)), f"the {verdict.decided_by} gave")
    detail = verdict.decided_by.split("(", 1)[1].rstrip(")") if "(" in verdict.decided_by else ""
    sure = f", {percent(verdict.confidence)}" if verdict.confidence is not None else ""
    return f"{who} {verdict.label}{sure}" + (f" ({detail})" if detail else "")


def calibrated_says(result: Aggregate) -> str:
    """'the evidence read after the debate says SUPPORTED, 81%'."""
    return f"the evidence read after the debate says {result.label}, {percent(result.confidence)}"


def _last_arguments(turns: Sequence[Turn]) -> list[tuple[str, str]]:
    """Each debater's last argument (the judges' rulings left out), cut as an exhibit is read again with it."""
    latest = latest_by_agent([t for t in turns if t.round > 0])
    return [(agent, argument_text(t.text)) for agent, t in latest.items()]


def decided_by_words() -> dict[str, str]:
    """How a published ruling is said on the card, by the start of its ``decided_by``: each protocol declares its own."""
    return {key: said for protocol in discover().values() for key, said in protocol.decided_by.items()}
