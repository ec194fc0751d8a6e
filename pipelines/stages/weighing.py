"""A debate's belief weighed as desk weighs its exhibits, for a model that cannot weigh several passages in one answer.

Asked over six exhibits at once, the embedded model's belief told supported from refuted
claims no better than chance (AUC 0.45 on Check-COVID train), while desk's calibrated weighing
of the same exhibits, each stance read on its own, reached 0.92
(docs/measurements/2026-11-27-belief-reader.md). So a grounded debate on a calibrated model
can keep its belief the same way (``belief.debate_reader``):

1. it starts from desk's reading of its exhibits (their stances, the claim's opposite, the
   calibration), which grounding made before the debate;
2. after each round, the evidence that round's turns cite is read again with the arguments
   made about it (``belief.reread_with``: the turns citing it; or every side, each other
   debater's argument of the round beside them, as desk reads a contested exhibit), each cut
   as a contested exhibit's arguments are; evidence the debate found that was never read is
   read for the first time; at most ``belief.reread`` items a reading;
3. every item's latest stance is weighed and calibrated as desk weighs its exhibits; the
   probabilities are the belief.

No stance event is emitted: these readings are the belief's, not the exhibits' (the evidence
panel keeps showing desk's); the ``BeliefRead`` names the items read again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipelines.calibration.files import Calibration
from pipelines.core.domain import Evidence, Turn
from pipelines.run.context import RunContext
from pipelines.stages.debate_history import latest_by_agent
from pipelines.stages.exhibit_reading import exhibit_settings
from pipelines.stages.stance import Stance, argument_text, read_desk_stance
from pipelines.stages.stance_aggregation import Aggregate, aggregate


@dataclass
class Weighing:
    """What the belief weighs: every item's latest stance, in the order the calibration reads them."""

    negation: str  # the claim's opposite, as desk wrote it
    calibration: Calibration
    stances: dict[str, Stance]
    read_as: dict[str, Evidence]  # what is read for each item (desk's passage or document)
    order: list[str]  # retrieval order, then items the debate found, as they first reached the belief
    weighed_turns: set[str] = field(default_factory=set)


def weighs(ctx: RunContext) -> Weighing | None:
    """This run's weighing, when its belief is weighed (``belief.debate_reader``, a grounded debate on a calibrated model)."""
    return ctx.state.get(Weighing)


def start_weighing(
    ctx: RunContext,
    *,
    negation: str,
    calibration: Calibration | None,
    stances: dict[str, Stance],
    read_as: dict[str, Evidence],
    order: Sequence[str],
) -> Weighing | None:
    """After grounding: the debate's belief will be weighed from desk's reading (``belief.debate_reader`` weighed, with a calibration)."""
    if ctx.config.belief.debate_reader != "weighed" or calibration is None:
        return None
    return ctx.state.keep(Weighing(negation, calibration, dict(stances), dict(read_as), list(order)))


async def weigh(
    ctx: RunContext, weighing: Weighing, *, turns: Sequence[Turn], evidence: Sequence[Evidence]
) -> tuple[Aggregate, list[str], list[str]]:
    """Read again what the new turns cite (with their arguments) and what was never read, then weigh every item.

    Returns the weighing, the ids read with arguments, and the ids read for the first time without any.
    """
    desk = exhibit_settings(ctx.config)
    new = [t for t in turns if t.id not in weighing.weighed_turns and t.round > 0]
    weighing.weighed_turns.update(t.id for t in new)
    found = {e.id: e for e in evidence}
    cited = [i for t in new for i in t.cited if i in weighing.read_as or i in found]
    unread = [e.id for e in evidence if e.id not in weighing.stances]
    to_read = list(dict.fromkeys([*cited, *unread]))[: ctx.config.belief.reread]
    judge = ctx.llm("judge")
    argued: list[str] = []
    for item in to_read:
        exhibit = weighing.read_as.get(item) or found[item]
        arguments = _arguments_about(item, new, ctx.config.belief.reread_with) if item in cited else []
        weighing.stances[item] = await read_desk_stance(
            judge, desk, ctx.claim.text, exhibit, opposite=weighing.negation, arguments=arguments
        )
        weighing.read_as.setdefault(item, exhibit)
        if arguments:
            argued.append(item)
        if item not in weighing.order:
            weighing.order.append(item)
    # read before it reached the belief (a court's admissibility reads an exhibit as it joins): weighed from now on
    weighing.order += [e.id for e in evidence if e.id in weighing.stances and e.id not in weighing.order]
    result = aggregate(
        [weighing.stances[i] for i in weighing.order], weighing.calibration, strong_at=desk.strong_at, decide_at=desk.decide_at
    )
    return result, argued, [i for i in to_read if i not in argued]


def _arguments_about(item: str, turns: Sequence[Turn], reread_with: str) -> list[tuple[str, str]]:
    """The arguments an item is read again with: those citing it, then (every side) each other debater's latest of the round."""
    citing = [t for t in turns if item in t.cited]
    if reread_with == "every side":
        citing += [t for agent, t in latest_by_agent(turns).items() if all(c.agent != agent for c in citing)]
    return [(t.agent, argument_text(t.text)) for t in citing]
