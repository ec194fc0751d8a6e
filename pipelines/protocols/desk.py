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

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from pipelines.calibration.files import Calibration, calibration_mismatch, load_calibration
from pipelines.config import DeskConfig
from pipelines.domain import Evidence, Turn, Verdict
from pipelines.errors import ModelOutputError
from pipelines.events import ExhibitStanceRead, RoundStarted, StageCompleted, StageFailed, StageStarted, VerdictAggregated
from pipelines.llm.client import LLM
from pipelines.personas import HUMAN_CHECKER
from pipelines.prompts import load_prompt
from pipelines.protocols.base import CardFacts, Protocol, register_protocol
from pipelines.run.context import Review, RunContext
from pipelines.stages.argument import stream_turn
from pipelines.stages.belief import READ_AGAIN, read_belief, weighed_belief
from pipelines.stages.exhibits import as_documents, gather_exhibits, quote_sentences
from pipelines.stages.retrieval import format_evidence
from pipelines.stages.stance import STANCE_WORDS, Stance, negate, read_against, read_desk_stance
from pipelines.stages.stance_aggregation import Aggregate, aggregate

DOCUMENT_CHARS = 2400  # a whole document read as one exhibit is cut here (a Check-COVID abstract is about 1,500)
CLERK = "Clerk"  # who searches: the desk's own retrieval, not an arguing agent
ADVOCATES = (  # (name, the stance it argues from, its brief)
    ("Advocate for", "SUPPORTS", "Argue that the exhibits show the claim is true."),
    ("Advocate against", "REFUTES", "Argue that the exhibits show the claim is false."),
)


@dataclass
class Reading:
    """Desk's reading of the claim's exhibits: what was read, each exhibit's stance, and the verdict they support."""

    exhibits: list[Evidence]  # in retrieval order (as the calibration reads them)
    read_as: dict[str, Evidence]  # exhibit id -> what was read for it (the passage, or its whole document)
    stances: dict[str, Stance]
    quotes: dict[str, tuple[str, ...]]
    negation: str
    calibration: Calibration | None
    result: Aggregate

    @property
    def ranked(self) -> list[Evidence]:
        """The exhibits those the verdict rests on and those contested first, then the rest in retrieval order."""
        return _by_rank(self.exhibits, self.result)


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

    return Verdict(
        label=result.label,
        confidence=result.confidence,
        rationale=result.reason,
        cited=result.rests_on,
        decided_by="calibrated exhibit stances" if result.calibration != "uncalibrated" else "exhibit stances (uncalibrated)",
        stop_reason="ruled after a debate over conflicting exhibits" if debated else "ruled from the exhibits' stances",
    )


async def read_exhibits(ctx: RunContext, *, review: bool = True) -> Reading:
    """Steps 1-3: the exhibits, their stances and the verdict they support (without ``review``, no step-mode pauses: a debate grounded in them pauses itself)."""
    cfg = ctx.config.desk
    claim = ctx.claim.text

    # 1. exhibits (step mode: the checker sees the planned query first, then the exhibits before they are read)
    decision = await ctx.review(0, {CLERK: claim[:300]}) if review else Review()
    query = decision.queries.get(CLERK, claim[:300])
    exhibits: list[Evidence] = []
    if not decision.stop:
        ctx.emit(StageStarted(stage="exhibits", detail=f"searching for at most {cfg.exhibits} exhibits"))
        exhibits = await gather_exhibits(
            ctx, agent=CLERK, queries=[query], limit=cfg.exhibits, rewrites=cfg.rewrites, extra_queries=decision.extra_queries
        )
        ctx.emit(StageCompleted(stage="exhibits", detail=f"{len(exhibits)} exhibits"))
        decision = await ctx.review(1, {}) if review else Review()
        if decision.extra_queries:
            exhibits += await gather_exhibits(
                ctx, agent=HUMAN_CHECKER, queries=list(decision.extra_queries), limit=cfg.exhibits, rewrites=0
            )
    exhibits += [e for e in ctx.pool.values() if e.source == "user" and e not in exhibits]  # evidence the checker pasted
    return await read_these(ctx, ctx.usable(exhibits))


async def read_these(ctx: RunContext, exhibits: list[Evidence], *, round: int = 1, limit: int = 0) -> Reading:
    """Steps 2-3 over ``exhibits`` (retrieval order): each one's stance, and the calibrated verdict they support.

    ``limit``: the most exhibits they were chosen under (0: ``desk.exhibits``), checked against the calibration's fit.
    """
    cfg = ctx.config.desk
    claim = ctx.claim.text
    # 2. stances
    judge = ctx.llm("judge")
    read_as = await as_documents(ctx, exhibits, DOCUMENT_CHARS) if cfg.unit == "document" else {e.id: e for e in exhibits}
    quotes = await quote_sentences(ctx.tools.embedder, claim, list(read_as.values()), cfg.quotes) if exhibits else {}
    negation = await _negation(ctx, judge, cfg) if (cfg.negation or _asks_contrast(cfg)) and exhibits else ""
    ctx.emit(StageStarted(stage="stances", detail=_reading(len(exhibits), cfg, negation=bool(negation))))
    stances: dict[str, Stance] = {}
    for exhibit in exhibits:
        stances[exhibit.id] = await _read(ctx, judge, read_as[exhibit.id], quotes.get(exhibit.id, ()), round=round, negation=negation)
    ctx.emit(StageCompleted(stage="stances", detail=_tally(stances.values())))

    # 3. verdict
    calibration = load_calibration(judge.model_name, cfg.reader, ctx.calibration_dir)
    mismatch = calibration_mismatch(
        calibration,
        reader=cfg.reader,
        exhibits=limit or cfg.exhibits,
        orders=cfg.orders,
        unit=cfg.unit,
        negation=bool(read_against(cfg, negation)),
        shots=0 if cfg.reader == "contrast" else cfg.shots,
        **({"contrast_share": cfg.contrast_share} if cfg.reader == "both" else {}),
    )
    if mismatch:
        ctx.emit(StageFailed(stage="calibration", reason=mismatch))
    result = _aggregate(ctx, list(stances.values()), calibration, round=round, debated=False)
    return Reading(exhibits, read_as, stances, quotes, negation, calibration, result)


async def _negation(ctx: RunContext, judge: LLM, cfg: DeskConfig) -> str:
    """The claim's opposite, written by the judge's model (or stated plainly when it writes none), shown in the stage log."""
    uses = ["to read each exhibit against it too"] if cfg.negation and cfg.reader != "contrast" else []
    uses += ["to ask which of the two each exhibit supports"] if _asks_contrast(cfg) else []
    why = " and ".join(uses)
    ctx.emit(StageStarted(stage="negation", detail=f"writing the claim's opposite, {why}"))
    negation, by_model = await negate(judge, ctx.claim.text)
    detail = f"the claim's opposite: {negation}" if by_model else f"the model wrote no usable opposite, so it is stated plainly: {negation}"
    ctx.emit(StageCompleted(stage="negation", detail=detail))
    return negation


async def _read(
    ctx: RunContext,
    judge: LLM,
    exhibit: Evidence,
    quoted: tuple[str, ...],
    *,
    round: int,
    negation: str = "",
    arguments: Sequence[tuple[str, str]] = (),
) -> Stance:
    stance = await read_desk_stance(judge, ctx.config.desk, ctx.claim.text, exhibit, opposite=negation, arguments=arguments)
    ctx.emit(
        ExhibitStanceRead(
            evidence_id=exhibit.id,
            round=round,
            probabilities=dict(stance.probabilities),
            per_order=tuple(dict(p) for p in stance.per_order),
            orders_agree=stance.orders_agree,
            method=stance.method,
            quoted=quoted,
            note=stance.note,
        )
    )
    return stance


def _aggregate(ctx: RunContext, stances: list[Stance], calibration: Calibration | None, *, round: int, debated: bool) -> Aggregate:
    cfg = ctx.config.desk
    result = aggregate(stances, calibration, strong_at=cfg.strong_at, decide_at=cfg.decide_at)
    recorded = asdict(result)
    del recorded["contested"]  # which exhibits the debate takes up: the run shows it by debating them
    ctx.emit(VerdictAggregated(round=round, debated=debated, **recorded))
    return result


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
        messages = load_prompt("desk_advocate").render(
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


async def reread_contested(ctx: RunContext, reading: Reading, arguments: Sequence[tuple[str, str]], *, round: int = 2) -> Aggregate:
    """The contested exhibits read again with ``arguments`` (who, what they argued) in the prompt, and the verdict weighed again."""
    contested = reading.result.contested
    ctx.emit(StageStarted(stage="stances", detail=f"reading the {len(contested)} contested exhibits again, with both arguments"))
    judge = ctx.llm("judge")
    for exhibit_id in contested:
        reading.stances[exhibit_id] = await _read(
            ctx,
            judge,
            reading.read_as[exhibit_id],
            reading.quotes.get(exhibit_id, ()),
            round=round,
            negation=reading.negation,
            arguments=arguments,
        )
    ctx.emit(StageCompleted(stage="stances", detail=_tally(reading.stances.values())))
    return _aggregate(ctx, list(reading.stances.values()), reading.calibration, round=round, debated=True)


def _by_rank(exhibits: Sequence[Evidence], result: Aggregate) -> list[Evidence]:
    """The exhibits as the belief reads them: those the verdict rests on and those contested first, then the rest in retrieval order."""
    first = [*result.rests_on, *result.contested]
    by_id = {e.id: e for e in exhibits}
    return [by_id[i] for i in dict.fromkeys([*first, *by_id]) if i in by_id]


def _asks_contrast(cfg: DeskConfig) -> bool:
    """Whether the reader asks the contrast question (which of the claim and its opposite an exhibit supports): it needs the opposite."""
    return cfg.reader in ("contrast", "both")


def _reading(count: int, cfg: DeskConfig, *, negation: bool) -> str:
    """The stances stage's opening line: what is asked of each exhibit."""
    if cfg.reader == "contrast":
        return f"asking of each of {count} exhibits whether it supports the claim or its opposite, in {cfg.orders} option orders"
    also = ", and against the claim's opposite" if negation and cfg.negation else ""
    text = f"reading {count} exhibits in {cfg.orders} option orders{also}"
    if cfg.reader == "both":
        text += f"; then asking whether each supports the claim or its opposite, in 2 orders ({cfg.contrast_share:.0%} of the stance)"
    return text


def _tally(stances: Iterable[Stance]) -> str:
    leanings = [s.leaning for s in stances]
    agree = sum(s.orders_agree for s in stances)
    counts = ", ".join(f"{leanings.count(k)} {STANCE_WORDS[k]}" for k in ("SUPPORTS", "REFUTES", "UNRELATED"))
    return f"{counts}; the option orders agreed on {agree} of {len(leanings)}"


def _why_no_debate(result: Aggregate) -> str:
    if not result.contested:
        return "no exhibit is strong for either side"
    return "the strong exhibits all point the same way"


PROTOCOL = register_protocol(
    Protocol(
        name="desk",
        run=run_desk,
        title="Desk (default): exhibit stances, calibrated verdict",
        description=(
            "Reads each retrieved exhibit's stance from the model's answer probabilities (option orders averaged), "
            "combines them into a calibrated verdict, and debates only when strong exhibits conflict. Built for small local models."
        ),
        probability_roles=("judge",),
        card=CardFacts(
            how_decided="Each exhibit was read for whether it supports or contradicts the claim, and the readings were weighed together.",
            confidence_source="the probability of the label, weighed from each exhibit's stance",
        ),
    )
)
