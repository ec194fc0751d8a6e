"""The judge's belief after a round: its probabilities of SUPPORTS / REFUTES / NOT ENOUGH INFO given the debate so far.

Read as desk reads an exhibit's stance (``label_probability``): the three answers are lettered
options, the belief is the letters' probabilities at the first answer token, renormalised,
and the question is asked in both orders of the two sides (supported and refuted swap
letters; "not enough information" stays last) and averaged, so a pull towards one letter
counts for each side once. The prompt puts the claim, the evidence and the debate first and
the options last, so the two orders differ only in their last lines and a server that keeps
its previous prompt (llama.cpp does) reads only those again.

Every protocol calls ``read_belief`` after each round with the turns so far (desk before and
after its debate; single, which has no rounds, at its end); each reading is a ``BeliefRead`` event, so the
result page and History plot which round moved the belief and by how much. It is a reading
beside the protocol's own ruling, never the ruling itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pipelines.calibration.files import belief_prompt_sha, load_calibration
from pipelines.core.domain import Evidence, Label, Turn
from pipelines.core.errors import DebateDeskError, ModelOutputError
from pipelines.core.events import BeliefRead, StageCompleted, StageFailed, StageStarted
from pipelines.core.text.probability import belief_line
from pipelines.prompts import load_prompt
from pipelines.run.context import RunContext
from pipelines.stages.debate_history import NO_HISTORY, format_history
from pipelines.stages.exhibit_reading import exhibit_settings
from pipelines.stages.label_probability import estimate_label_probabilities, options_line
from pipelines.stages.retrieval import format_evidence
from pipelines.stages.stance_aggregation import Aggregate
from pipelines.stages.weighing import Weighing, weigh, weighs

# In a reading's ``over`` when items were read again with the debate's arguments (the chart's caption looks for it).
READ_AGAIN = "read again"

LABELS: tuple[Label, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
LETTERS = ("A", "B", "C")
ORDERS: tuple[tuple[Label, ...], ...] = (("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"), ("REFUTES", "SUPPORTS", "NOT ENOUGH INFO"))
OPTION_TEXT: dict[Label, str] = {
    "SUPPORTS": "Supported: the evidence shows the claim is true.",
    "REFUTES": "Refuted: the evidence shows the claim is false.",
    "NOT ENOUGH INFO": "Not enough information: the evidence does not settle it.",
}
NO_EVIDENCE = "(no evidence: the debaters argue from what they know)"
TELLS_APART_AT = 0.65  # an AUC below this: the belief's level says little about which side the evidence takes
CHANCE_UP_TO = 0.55


@dataclass(frozen=True)
class Belief:
    """The judge's probabilities after one round, and what they were read over."""

    round: int
    probabilities: dict[str, float]
    over: str

    @property
    def label(self) -> str:
        return max(LABELS, key=lambda k: self.probabilities[k])


def mean_belief(per_order: Sequence[dict[str, float]]) -> dict[str, float]:
    """The orders' readings averaged, each alike (4 decimals)."""
    return {k: round(sum(p[k] for p in per_order) / len(per_order), 4) for k in LABELS}


def options_block(order: Sequence[Label]) -> str:
    """The lettered answers in ``order``, then the ``Options:`` line the readers look for."""
    lines = [f"{letter}. {OPTION_TEXT[label]}" for letter, label in zip(LETTERS, order, strict=True)]
    return "\n".join([*lines, options_line(LETTERS)])


def shown_evidence(evidence: Sequence[Evidence], turns: Sequence[Turn], most: int) -> list[Evidence]:
    """At most ``most`` items: those the turns cited first (latest turn first), then the rest in the order they were found."""
    by_id = {e.id: e for e in evidence}
    cited = [i for turn in reversed(turns) for i in turn.cited if i in by_id]
    order = list(dict.fromkeys([*cited, *by_id]))
    return [by_id[i] for i in order[:most]]


def describe(turns: Sequence[Turn], evidence: Sequence[Evidence], what: str) -> str:
    """What a reading was read over, in words: '<what>: 4 turns, 6 evidence items'."""
    parts = [f"{len(turns)} turn{'s' if len(turns) != 1 else ''}" if turns else "no turns"]
    parts.append(f"{len(evidence)} evidence item{'s' if len(evidence) != 1 else ''}" if evidence else "no evidence")
    return f"{what}: {', '.join(parts)}"


async def read_belief(
    ctx: RunContext,
    *,
    round: int,
    turns: Sequence[Turn],
    what: str,
    evidence: Sequence[Evidence] | None = None,
    stage_names: dict[int, str] | None = None,
) -> Belief | None:
    """The judge's belief given ``turns`` and the evidence (the run's usable pool unless given); emitted as a BeliefRead.

    ``what`` names the moment ("after round 2", "the exhibits alone"). None when the setting is
    off, or when the model named no option (a StageFailed says so and the run goes on).
    """
    cfg = ctx.config.belief
    if not cfg.per_round:
        return None
    weighing = weighs(ctx)
    if weighing is not None:
        return await _weighed_reading(ctx, weighing, round=round, turns=turns, what=what, evidence=evidence)
    # 1. what the judge reads: the evidence the debaters cited first, and the turns so far
    pool = ctx.usable(list(ctx.pool.values()) if evidence is None else list(evidence))
    shown = shown_evidence(pool, turns, cfg.evidence)
    over = describe(turns, shown, what)
    ctx.emit(StageStarted(stage="belief", detail=f"the judge reads its belief {over}"))
    prompt = load_prompt("belief")
    evidence_text = format_evidence(shown, max_chars=cfg.evidence_chars) if shown else NO_EVIDENCE
    debate = format_history(turns, stage_names=stage_names, max_chars=cfg.turn_chars) if turns else NO_HISTORY
    # 2. both orders of the two sides, one after the other (the second reuses the first's prompt)
    per_order: list[dict[str, float]] = []
    method: Literal["logprobs", "sampling"] = "logprobs"
    note = ""
    for order in ORDERS:
        messages = prompt.render(claim=ctx.claim.text, evidence=evidence_text, debate=debate, options=options_block(order))
        try:
            read = await estimate_label_probabilities(ctx.llm("judge"), messages, LETTERS, max_tokens=1)
        except ModelOutputError as exc:
            ctx.emit(StageFailed(stage="belief", reason=f"{exc}; the belief {what} is not shown"))
            return None
        per_order.append({label: read.p(letter) for letter, label in zip(LETTERS, order, strict=True)})
        if read.method == "sampling":
            method, note = "sampling", read.note
    # 3. averaged, each order alike
    probabilities = mean_belief(per_order)
    ctx.emit(
        BeliefRead(
            reliability=reliability(ctx),
            round=round,
            probabilities=probabilities,
            over=over,
            turns=len(turns),
            evidence_ids=tuple(e.id for e in shown),
            per_order=tuple(per_order),
            method=method,
            note=note,
        )
    )
    ctx.emit(StageCompleted(stage="belief", detail=belief_line(probabilities)))
    return Belief(round=round, probabilities=probabilities, over=over)


def reliability(ctx: RunContext) -> str:
    """How well the judge's model told supported from refuted claims by this belief, as its calibration measured it ('' unmeasured).

    ``python -m pipelines calibrate`` reads the belief over each labelled claim's exhibits alone
    (desk's first reading) and keeps the AUC of p(supported) - p(refuted) in the calibration;
    a measure of another belief prompt does not count.
    """
    calibration = load_calibration(ctx.llm("judge").model_name, exhibit_settings(ctx.config).reader, ctx.calibration_dir)
    measured = calibration.settings.get("belief") if calibration is not None else None
    if not isinstance(measured, dict) or measured.get("prompt_sha") != belief_prompt_sha():
        return ""
    return reliability_words(float(measured["auc"]), int(measured["claims"]), str(measured.get("on", "")))


def reliability_words(auc: float, claims: int, on: str = "") -> str:
    """The measure in a sentence a checker reads under the chart."""
    where = f" {on}" if on else ""
    if auc < TELLS_APART_AT:
        how = "no better" if auc < CHANCE_UP_TO else "little better"
        return (
            f"When this model was calibrated, its belief from the evidence alone told supported from refuted claims {how} than "
            f"chance (AUC {auc:.2f} over {claims} claims{where}; 0.5 is chance): read which way a round moves it, not its level."
        )
    return f"When this model was calibrated, its belief from the evidence alone told supported from refuted claims apart (AUC {auc:.2f} over {claims} claims{where})."


async def weighed_belief(ctx: RunContext, *, round: int, result: Aggregate, exhibits: Sequence[Evidence], what: str) -> Belief | None:
    """Desk's calibrated weighing of its exhibits as its belief: no call, where asking the judge over them at once says little.

    Measured on train, the embedded model's belief asked over six exhibits at once told
    supported from refuted claims no better than chance (AUC 0.45), where desk's calibrated
    weighing of the same exhibits' stances, each read on its own, reached 0.92
    (docs/measurements/2026-11-27-belief-reader.md). None when the setting is off.
    """
    if not ctx.config.belief.per_round:
        return None
    ctx.emit(StageStarted(stage="belief", detail=f"the belief {what}: desk's calibrated weighing of its exhibits"))
    over = f"{what}: {len(exhibits)} exhibit{'s' if len(exhibits) != 1 else ''} weighed, each stance read on its own and calibrated"
    return _weighed(ctx, result, round=round, over=over, evidence_ids=tuple(e.id for e in exhibits))


async def _weighed_reading(
    ctx: RunContext, weighing: Weighing, *, round: int, turns: Sequence[Turn], what: str, evidence: Sequence[Evidence] | None
) -> Belief | None:
    """The debate's belief weighed as desk weighs its exhibits (``belief.debate_reader`` weighed): stages/weighing.py."""
    pool = ctx.usable(list(ctx.pool.values()) if evidence is None else list(evidence))
    ctx.emit(StageStarted(stage="belief", detail=f"the belief {what}: the evidence weighed as desk weighs its exhibits"))
    try:
        result, argued, fresh = await weigh(ctx, weighing, turns=turns, evidence=pool)
    except DebateDeskError as exc:
        ctx.emit(StageFailed(stage="belief", reason=f"{exc}; the belief {what} is not shown"))
        return None
    read = [
        *([f"{_items(argued)} {READ_AGAIN} with the arguments made about them"] if argued else []),
        *([f"{_items(fresh)} read for the first time"] if fresh else []),
    ]
    over = f"{what}: {', '.join(read) or 'nothing new read'}; {_items(weighing.order)} weighed"
    return _weighed(ctx, result, round=round, over=over, evidence_ids=(*argued, *fresh), turns=len(turns))


def _weighed(ctx: RunContext, result: Aggregate, *, round: int, over: str, evidence_ids: tuple[str, ...], turns: int = 0) -> Belief:
    """A weighing emitted as the belief (a BeliefRead with method "exhibits"), after the stage line the caller opened."""
    probabilities: dict[str, float] = {k: float(result.probabilities.get(k, 0.0)) for k in LABELS}  # rounded by the aggregation
    ctx.emit(
        BeliefRead(
            round=round,
            probabilities=probabilities,
            over=over,
            turns=turns,
            evidence_ids=evidence_ids,
            method="exhibits",
            note=f"calibration {result.calibration}",
        )
    )
    ctx.emit(StageCompleted(stage="belief", detail=belief_line(probabilities)))
    return Belief(round=round, probabilities=probabilities, over=over)


def _items(ids: Sequence[str]) -> str:
    return f"{len(ids)} item{'s' if len(ids) != 1 else ''}"
