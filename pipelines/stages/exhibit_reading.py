"""Reading a claim's exhibits: the stage desk runs and grounding starts a debate from.

1. Exhibits: hybrid search for the claim (and for model rewrites of it, and the web when on), at most
   ``desk.exhibits`` distinct passages, each with the sentences closest to the claim.
2. Stances: each exhibit's probabilities of supporting, contradicting or not addressing the claim, read from the
   answer letters' log-probabilities over option orders (stages/stance.py).
3. Verdict: the stances combined and calibrated for the model (stages/stance_aggregation.py).
The contested exhibits can be read again with arguments in view (``reread_contested``). Its settings are the section
of ``RunConfig`` whose protocol declares ``reads_exhibits`` (``exhibit_settings``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace

from pipelines.calibration.files import Calibration, calibration_mismatch, load_calibration
from pipelines.calibration.ground import MEASURED, reading_ground
from pipelines.core.config import RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.events import ExhibitStanceRead, StageCompleted, StageFailed, StageStarted, VerdictAggregated
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.core.text.probability import percent
from pipelines.protocols.base import exhibit_reader
from pipelines.protocols.desk.settings import DeskConfig
from pipelines.run.context import Review, RunContext
from pipelines.run.llm.client import LLM
from pipelines.stages.exhibits import as_documents, gather_exhibits, quote_sentences, set_aside_far
from pipelines.stages.stance import (
    STANCE_WORDS,
    Stance,
    asks_contrast,
    negate,
    read_desk_stance,
    reads_against,
    reads_opposite,
    takes_shots,
    writes_opposite,
)
from pipelines.stages.stance_aggregation import Aggregate, Bounds, aggregate, settled_bounds

DOCUMENT_CHARS = 2400  # a whole document read as one exhibit is cut here (a Check-COVID abstract is about 1,500)


CLERK = "Clerk"  # who searches: the desk's own retrieval, not an arguing agent


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
    bounds: Bounds | None = None  # where reading stopped early: how far the exhibits left unread could move p(supported)
    mismatch: str = ""  # the calibration was fitted for other reading settings (its number is then approximate)

    @property
    def ranked(self) -> list[Evidence]:
        """The exhibits those the verdict rests on and those contested first, then the rest in retrieval order."""
        return _by_rank(self.exhibits, self.result)


def exhibit_settings(config: RunConfig) -> DeskConfig:
    """How exhibits are read: the settings section of the protocol that declares ``reads_exhibits``."""
    settings = getattr(config, exhibit_reader())
    assert isinstance(settings, DeskConfig)
    return settings


async def read_exhibits(ctx: RunContext, *, review: bool = True) -> Reading:
    """Steps 1-3: the exhibits, their stances and the verdict they support (without ``review``, no step-mode pauses: a debate grounded in them pauses itself)."""
    cfg = exhibit_settings(ctx.config)
    claim = ctx.claim.text

    # 1. exhibits (step mode: the checker sees the planned query first, then the exhibits before they are read)
    decision = await ctx.review(0, {CLERK: claim[:300]}) if review else Review()
    query = decision.queries.get(CLERK, claim[:300])
    exhibits: list[Evidence] = []
    aside: list[tuple[Evidence, float]] = []
    nearest: float | None = None
    if not decision.stop:
        ctx.emit(StageStarted(stage="exhibits", detail=f"searching for at most {cfg.exhibits} exhibits"))
        found = await gather_exhibits(
            ctx, agent=CLERK, queries=[query], limit=cfg.exhibits, rewrites=cfg.rewrites, extra_queries=decision.extra_queries
        )
        clerks = [e for e in found if e.found_by != HUMAN_CHECKER]  # what the checker searched for is read, however far
        aside, nearest = await set_aside_far(ctx.tools.embedder, claim, clerks, cfg.min_likeness)
        far = {e.id for e, _ in aside}
        exhibits = [e for e in found if e.id not in far]  # in the search's order: best first, as reading stops
        ctx.emit(StageCompleted(stage="exhibits", detail=f"{len(exhibits)} exhibits" + _aside_words(aside, cfg.min_likeness)))
        decision = await ctx.review(1, {}) if review else Review()
        if decision.extra_queries:
            exhibits += await gather_exhibits(
                ctx, agent=HUMAN_CHECKER, queries=list(decision.extra_queries), limit=cfg.exhibits, rewrites=0
            )
    exhibits += [e for e in ctx.pool.values() if e.source == "user" and e not in exhibits]  # evidence the checker pasted
    return await read_these(ctx, ctx.usable(exhibits), set_aside=len(aside), nearest=nearest)


def _aside_words(aside: Sequence[tuple[Evidence, float]], floor: float) -> str:
    """The exhibits stage's closing words for what was set aside as too far from the claim ('' when nothing was)."""
    if not aside:
        return ""
    named = "; ".join(
        f"{e.id} “{e.title or e.text[:60]}” ({math.floor(x * 100) / 100:.2f})" for e, x in aside[:5]
    )  # never shown at the floor
    more = f" and {len(aside) - 5} more" if len(aside) > 5 else ""
    return f"; {len(aside)} more found were set aside unread, further from the claim in meaning than {floor:.2f}: {named}{more}"


async def read_these(
    ctx: RunContext, exhibits: list[Evidence], *, round: int = 1, limit: int = 0, set_aside: int = 0, nearest: float | None = None
) -> Reading:
    """Steps 2-3 over ``exhibits`` (retrieval order): each one's stance, and the calibrated verdict they support.

    ``limit``: the most exhibits they were chosen under (0: ``desk.exhibits``), checked against the calibration's fit;
    ``set_aside``: how many more the search found that were too far from the claim to read (the card counts them);
    ``nearest``: the likeness to the claim of the nearest passage the search found (the card says when it is far).
    """
    cfg = exhibit_settings(ctx.config)
    claim = ctx.claim.text
    # 2. stances
    judge = ctx.llm("judge")
    read_as = await as_documents(ctx, exhibits, DOCUMENT_CHARS) if cfg.unit == "document" else {e.id: e for e in exhibits}
    quotes = await quote_sentences(ctx.tools.embedder, claim, list(read_as.values()), cfg.quotes) if exhibits else {}
    negation = await _negation(ctx, judge, cfg) if writes_opposite(cfg) and exhibits else ""
    ctx.emit(StageStarted(stage="stances", detail=_reading(len(exhibits), cfg, negation=bool(negation))))
    calibration = load_calibration(judge.model_name, cfg.reader, ctx.calibration_dir)
    stances: dict[str, Stance] = {}
    bounds = None
    for index, exhibit in enumerate(exhibits):
        stances[exhibit.id] = await _read(ctx, judge, read_as[exhibit.id], quotes.get(exhibit.id, ()), round=round, negation=negation)
        bounds = _settled(cfg, list(stances.values()), exhibits[index + 1 :], calibration)
        if bounds is not None:
            break
    ctx.emit(StageCompleted(stage="stances", detail=_tally(stances.values()) + _skipped(bounds)))

    # 3. verdict
    mismatch = calibration_mismatch(
        calibration,
        reader=cfg.reader,
        exhibits=limit or cfg.exhibits,
        orders=cfg.orders,
        unit=cfg.unit,
        negation=reads_opposite(cfg),
        shots=cfg.shots if takes_shots(cfg.reader) else 0,
        **({"contrast_share": cfg.contrast_share} if cfg.reader == "both" else {}),
    )
    if mismatch:
        ctx.emit(StageFailed(stage="calibration", reason=mismatch))
    read = [e for e in exhibits if e.id in stances]
    result = _aggregate(
        ctx,
        list(stances.values()),
        calibration,
        read,
        round=round,
        debated=False,
        found=len(exhibits),
        bounds=bounds,
        set_aside=set_aside,
        nearest=nearest,
    )
    return Reading(read, read_as, stances, quotes, negation, calibration, result, bounds, mismatch)


async def _negation(ctx: RunContext, judge: LLM, cfg: DeskConfig) -> str:
    """The claim's opposite, written by the judge's model (or stated plainly when it writes none), shown in the stage log."""
    uses = ["to read each exhibit against it too"] if reads_against(cfg) else []
    uses += ["to ask which of the two each exhibit supports"] if asks_contrast(cfg) else []
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
    stance = await read_desk_stance(judge, exhibit_settings(ctx.config), ctx.claim.text, exhibit, opposite=negation, arguments=arguments)
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


def _aggregate(
    ctx: RunContext,
    stances: list[Stance],
    calibration: Calibration | None,
    exhibits: Sequence[Evidence],
    *,
    round: int,
    debated: bool,
    found: int = 0,
    bounds: Bounds | None = None,
    set_aside: int = 0,
    nearest: float | None = None,
) -> Aggregate:
    cfg = exhibit_settings(ctx.config)
    result = aggregate(stances, calibration, strong_at=cfg.strong_at, decide_at=cfg.decide_at)
    if not stances and set_aside:
        result = replace(result, reason=f"None of the {set_aside} passages the search found is close enough to the claim to read.")
    recorded = asdict(result)
    del recorded["contested"]  # which exhibits the debate takes up: the run shows it by debating them
    reading = {"found": found, "bound": (bounds.low, bounds.high)} if bounds is not None else {}
    ground = reading_ground(calibration, ctx.config.corpus, exhibits)
    ctx.emit(
        VerdictAggregated(
            round=round,
            debated=debated,
            read=len(stances),
            set_aside=set_aside,
            nearest=None if nearest is None else float(f"{nearest:.4f}"),  # `round` is the reading's round here
            ground=ground.kind,
            ground_note=ground.words,
            **reading,
            **recorded,
        )
    )
    return result


def _settled(cfg: DeskConfig, read: list[Stance], unread: Sequence[Evidence], calibration: Calibration | None) -> Bounds | None:
    """The bound on the verdict when reading can stop here (``desk.stop_early``), else None: read on.

    Never before an exhibit a checker pasted; the rest is ``settled_bounds`` (a calibration, no conflict a debate takes up).
    """
    if not cfg.stop_early or any(e.source == "user" for e in unread):
        return None
    return settled_bounds(read, len(unread), calibration, strong_at=cfg.strong_at, decide_at=cfg.decide_at, debate=cfg.debate)


def _skipped(bounds: Bounds | None) -> str:
    """The stances stage's closing words when reading stopped early: how many were left and why they could not matter."""
    if bounds is None:
        return ""
    return (
        f"; the other {bounds.unread} exhibits were not read: whatever they say, p(supported) would stay between "
        f"{bounds.low:.0%} and {bounds.high:.0%}, the same verdict"
    )


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
    return _aggregate(ctx, list(reading.stances.values()), reading.calibration, reading.exhibits, round=round, debated=True)


CALIBRATED = (
    "calibrated reading of the debate's evidence"  # a debate's verdict's decided_by when the reading is the verdict (run/grounding.py)
)
SETTLED = "desk's exhibits, which settle the claim"  # a verdict's decided_by when they did and its debate was not run
SETTLED_HOW = (
    "Each exhibit was read for whether it supports or contradicts the claim, and the readings were weighed together: they "
    "settled the claim, so the debate was not run (setting: belief.debate_when)."
)
UNCONTESTED = "desk's exhibits, which no debate could change"  # decided_by when the debate was not run as it could not change the verdict
UNCONTESTED_HOW = (
    "Each exhibit was read for whether it supports or contradicts the claim, and the readings were weighed together. No strong "
    "exhibits pointed both ways, so a debate could not have changed this verdict, and it was not run (setting: belief.debate_when)."
)
NOT_DEBATED = {SETTLED: SETTLED_HOW, UNCONTESTED: UNCONTESTED_HOW}  # each decided_by of a debate not run, and how the card says it
WEIGHED = "calibrated exhibit stances"  # desk's own verdict's decided_by when a calibration weighed its exhibits
READING_VERDICTS = frozenset({WEIGHED, CALIBRATED, *NOT_DEBATED})  # every decided_by of a verdict that is the calibrated reading itself


def why_uncontested(reading: Reading) -> str:
    """Why a debate could not change the verdict when the verdict is the calibrated reading of these exhibits; "" when it could.

    The caller knows the verdict would be that reading (``belief.verdict`` calibrated, the protocol ruled beside): a debate
    grounded in the exhibits changes it only by reading the contested ones again with both sides' arguments
    (``grounding.rule_beside``), so with a calibration and no strong exhibits pointing both ways, the verdict after a debate
    is this one. A mismatched calibration changes nothing here: the debate's ruling would use it the same way.
    """
    result = reading.result
    if reading.calibration is None or result.conflict:
        return ""
    return (
        f"no debate could change the verdict, as it is desk's calibrated reading of the {len(reading.exhibits)} exhibits read "
        f"({result.label} at {percent(result.confidence)}), which a debate changes only by reading contested exhibits again "
        "with both sides' arguments, and no strong exhibits point both ways"
    )


def why_settled(reading: Reading, corpus: str, at: float) -> str:
    """Why desk's exhibits settle the claim, so a debate need not be run, in words with the numbers; "" when they do not.

    Conservative, as a skipped debate is a claim that it could not have helped: the reading must be calibrated with the
    calibration fitted for these reading settings, on measured ground (its calibration measured on the corpus searched, every
    exhibit read from it: ``calibration/ground.py``); no strong exhibits point both ways (a conflict is what a debate takes
    up); and the calibrated verdict is SUPPORTS or REFUTES at ``at`` or above, at the worse end of the bound when exhibits
    were left unread (whatever they say, it stays there). NOT ENOUGH INFO never settles a claim: there a debate may help.
    """
    result = reading.result
    calibration = reading.calibration
    if calibration is None or reading.mismatch or result.conflict or result.label not in ("SUPPORTS", "REFUTES"):
        return ""
    if reading_ground(calibration, corpus, reading.exhibits).kind != MEASURED:
        return ""
    bounds = reading.bounds
    worst = result.confidence
    if bounds is not None:  # p(supported) could end anywhere in the bound: the side's least probability there
        worst = min(worst, bounds.low if result.label == "SUPPORTS" else 1.0 - bounds.high)
    if worst < at:
        return ""
    unread = (
        f"; the {bounds.unread} exhibits left unread could not bring it below {percent(worst)}"
        if bounds is not None and bounds.unread
        else ""
    )
    return (
        f"desk's exhibits settle it: {len(reading.exhibits)} read, calibrated ({calibration.name}, measured on this corpus), "
        f"{result.label} at {percent(result.confidence)} (settled from {percent(at)}: belief.settled_at){unread}, "
        "and no strong exhibits point both ways"
    )


def _by_rank(exhibits: Sequence[Evidence], result: Aggregate) -> list[Evidence]:
    """The exhibits as the belief reads them: those the verdict rests on and those contested first, then the rest in retrieval order."""
    first = [*result.rests_on, *result.contested]
    by_id = {e.id: e for e in exhibits}
    return [by_id[i] for i in dict.fromkeys([*first, *by_id]) if i in by_id]


def _reading(count: int, cfg: DeskConfig, *, negation: bool) -> str:
    """The stances stage's opening line: what is asked of each exhibit."""
    if cfg.reader == "contrast":
        return f"asking of each of {count} exhibits whether it supports the claim or its opposite, in {cfg.orders} option orders"
    if cfg.reader == "verdict":
        return f"asking of each of {count} exhibits whether it shows the claim accurate or inaccurate, in {cfg.orders} option orders"
    also = ", and against the claim's opposite" if negation and reads_against(cfg) else ""
    text = f"reading {count} exhibits in {cfg.orders} option orders{also}"
    if cfg.reader == "both":
        text += f"; then asking whether each supports the claim or its opposite, in 2 orders ({cfg.contrast_share:.0%} of the stance)"
    return text


def _tally(stances: Iterable[Stance]) -> str:
    leanings = [s.leaning for s in stances]
    agree = sum(s.orders_agree for s in stances)
    counts = ", ".join(f"{leanings.count(k)} {STANCE_WORDS[k]}" for k in ("SUPPORTS", "REFUTES", "UNRELATED"))
    return f"{counts}; the option orders agreed on {agree} of {len(leanings)}"
