"""`proclaim`: PROClaim, a courtroom for a claim.

1. The claim is decomposed into premises. 2. Opening retrieval: top k per premise into a
shared pool, then one supporting query (Plaintiff) and one challenging query (Defense).
3. Every candidate is ruled admissible (w = r x c): by the judge model, or from desk's
reading of it where the court is grounded and its belief weighed. 4. Rounds: each
counsel names a gap and drafts a query, the presiding judge refines both, retrieval runs
and only novel items (1 - max cosine to the pool >= 0.20) join, after admissibility; an
expert witness may testify; both counsels argue at once, self-reflect (s_ref) and a critic
scores them. 5. Stop rules from round 2: reflection plateau, critic resolution, novelty
exhaustion, the presiding judge ready, max rounds. 6. Optional role switch (gamma ->
delta_rs). 7. A panel of three judges votes (during the role switch: the panel reads the debate
proper, and delta_rs only enters the confidence). 8. Confidence from the votes, the judges'
quality scores, delta_rs and the winning side's s_ref.

Roles are data (CourtPersona records); formulas live in proclaim_scoring and the
admissibility, novelty and panel stages; this module only orchestrates and emits events.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from pipelines.core.domain import Evidence, Turn, Verdict
from pipelines.core.errors import ModelOutputError, StageFailedError
from pipelines.core.events import (
    AdmissibilityAssessed,
    CriticRuled,
    DebateStopped,
    ExpertWitnessRuled,
    PremiseChecked,
    PremisesDecomposed,
    ReflectionScored,
    RetrievalSummarized,
    RoleSwitchScored,
    RoundStarted,
    ScoreComputed,
    StageCompleted,
    StageFailed,
    StageStarted,
)
from pipelines.core.personas import HUMAN_CHECKER
from pipelines.prompts import load_prompt
from pipelines.protocols.proclaim.schemas import (
    ConsistencyRating,
    CriticReport,
    EvidenceGap,
    ExpertRuling,
    PremiseList,
    QueryDocket,
    SelfReflection,
    StanceQuery,
)
from pipelines.protocols.proclaim.scoring import (
    has_plateaued,
    novelty_exhausted,
    panel_confidence,
    reflection_score,
    role_switch_delta,
)
from pipelines.protocols.proclaim.settings import ProClaimConfig
from pipelines.run.context import OpeningPlan, RunContext
from pipelines.run.llm.registry import get_backend
from pipelines.stages.admissibility import FROM_READING, assess_admissibility, assess_from_reading, ranked_record
from pipelines.stages.argument import stream_turn, strip_label_line
from pipelines.stages.belief import read_belief
from pipelines.stages.novelty import filter_novel
from pipelines.stages.panel import Ballot, JudgeSeat, convene_panel, majority_vote
from pipelines.stages.retrieval import claim_rewrites, format_evidence, retrieve
from pipelines.stages.weighing import Weighing, weighs

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class CourtPersona:
    """A seat in the court: who it is, what it is told, and which configured model plays it."""

    name: str
    brief: str
    model_role: str
    stance: str = ""  # the panel label this side argues for


PLAINTIFF = CourtPersona(
    "Plaintiff", "You argue that the claim is true, building your case only on the exhibits.", "debater", stance="SUPPORTED"
)
DEFENSE = CourtPersona(
    "Defense", "You argue that the claim is false or not supported, building your case only on the exhibits.", "debater", "NOT SUPPORTED"
)
PRESIDING_JUDGE = CourtPersona("Presiding judge", "You run the court: refine queries, rule on experts, decide when to deliberate.", "judge")
CRITIC = CourtPersona("Critic", "You score both sides after each round and say when the debate is resolved.", "scorer")
REWRITES = "Claim rewrite"  # the agent name on searches for the claim's rewrites (retrieval.rewrites)
EXPERT_WITNESS = CourtPersona("Expert witness", "You testify neutrally from your field.", "debater")
PANEL = (
    CourtPersona(
        "Judge 1",
        "You are a strict evidentiary judge: only well-sourced, admitted exhibits count, and weak sourcing lowers your scores.",
        "judge",
    ),
    CourtPersona(
        "Judge 2", "You think like a scientist: you weigh study design, sample size and whether independent sources agree.", "judge"
    ),
    CourtPersona(
        "Judge 3",
        "You judge as a careful generalist: what should a reasonable reader conclude, and was any premise left unaddressed?",
        "judge",
    ),
)
COUNSELS = (PLAINTIFF, DEFENSE)
HISTORY_MESSAGES = 8  # the debate's last messages every call reads: four rounds of both counsels


@dataclass
class Plan:
    """The queries for the next round, the counsels' gaps and expert requests, and the presiding judge's view."""

    queries: dict[str, str]
    gaps: dict[str, str] = field(default_factory=dict)
    experts: dict[str, str] = field(default_factory=dict)
    ready: bool = False
    reason: str = ""
    extra_queries: tuple[str, ...] = ()


@dataclass
class Court:
    """The state of one trial, built up round by round."""

    premises: list[str] = field(default_factory=list)
    record: dict[str, Evidence] = field(default_factory=dict)  # the pool: joined and not discarded
    assessed: dict[str, Evidence] = field(default_factory=dict)  # every item with an admissibility ruling
    messages: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text) in order
    testimony: list[str] = field(default_factory=list)
    experts: list[str] = field(default_factory=list)
    turns: dict[str, list[Turn]] = field(default_factory=dict)
    s_ref: dict[str, list[float]] = field(default_factory=dict)
    discovery: dict[str, str] = field(default_factory=dict)
    round_means: list[float | None] = field(default_factory=list)
    critic: CriticReport | None = None
    stop_rule: str = ""
    stop_detail: str = ""


async def run_proclaim(ctx: RunContext) -> Verdict:
    cfg = ctx.config.proclaim
    court = Court()
    seats = await _seat_panel(ctx, cfg)  # first, so a bad judge backend fails before the debate

    court.premises = await _decompose(ctx, cfg)
    # Step mode: the checker sees the premises (each is also the first query searched for it) and may rewrite them.
    opening = await ctx.review(0, {}, OpeningPlan(kind="premises", items=tuple(court.premises)))
    if opening.plan is not None:
        court.premises = list(opening.plan)[: cfg.max_premises]
        ctx.emit(PremisesDecomposed(premises=tuple(court.premises)))
    if opening.added:
        await _admit_from_checker(ctx, cfg, court, 0, list(opening.added))
    await _open_case(ctx, cfg, court)

    plan = await _plan(ctx, cfg, court, round=1)
    last_round = 0
    for number in range(1, cfg.max_rounds + 1):
        last_round = number
        ctx.emit(RoundStarted(round=number))
        new_ids = await _progressive_retrieval(ctx, cfg, court, number, plan)
        await _expert_witness(ctx, cfg, court, number, plan)
        turns = await _arguments(ctx, cfg, court, number)
        # The critic scores the arguments, not the reflections on them: both at once.
        await asyncio.gather(_reflections(ctx, cfg, court, number, turns, new_ids), _critic(ctx, cfg, court, number))
        await _read_court_belief(ctx, court, round=number, what=f"after round {number}")

        fired = _stop_rules(cfg, court, number)
        if not fired and number < cfg.max_rounds:
            plan = await _plan(ctx, cfg, court, round=number + 1)
            if number >= cfg.first_stop_check_round and cfg.judge_can_close and plan.ready:
                fired.append(("presiding judge ready", plan.reason or "the presiding judge is ready to deliberate"))
        if not fired and number == cfg.max_rounds:
            fired.append(("max rounds", f"reached the maximum of {cfg.max_rounds} rounds"))
        review = await ctx.review(number, {} if fired else dict(plan.queries))
        if review.stop and not fired:
            fired.append(("checker", "stopped by the checker in step mode"))
        if review.added:
            await _admit_from_checker(ctx, cfg, court, number, list(review.added))
        if fired:
            court.stop_rule = fired[0][0]
            court.stop_detail = "; ".join(f"{rule}: {detail}" for rule, detail in fired)
            ctx.emit(DebateStopped(round=number, rule=court.stop_rule, detail=court.stop_detail))
            break
        plan.queries.update({side: q.strip() for side, q in review.queries.items() if side in plan.queries and q.strip()})
        plan.extra_queries = tuple(q.strip() for q in review.extra_queries if q.strip())

    # The panel reads the debate proper (its exhibits, arguments and record), not the role switch, whose delta_rs
    # only enters the confidence afterwards: the judges deliberate while the counsels argue the other side.
    panel = asyncio.create_task(_convene(ctx, seats, _panel_prompts(ctx, cfg, court, seats)))

    async def switch_and_check() -> float:
        delta = await _role_switch(ctx, cfg, court, after_round=last_round) if cfg.role_switch else 0.0
        await _premise_checklist(ctx, cfg, court)
        return delta

    try:
        delta_rs = await switch_and_check()
    except BaseException:
        panel.cancel()
        raise
    return _deliberate(ctx, cfg, court, await panel, delta_rs, last_round)


# --- 1-2. Premises and the opening retrieval


async def _decompose(ctx: RunContext, cfg: ProClaimConfig) -> list[str]:
    ctx.emit(StageStarted(stage="premises", detail="decomposing the claim into testable premises"))
    messages = load_prompt("proclaim_premises", __package__).render(claim=ctx.claim.text, n=cfg.max_premises)
    answer = await _ask(ctx, PRESIDING_JUDGE, messages, PremiseList, stage="premises", fallback="using the claim as its only premise")
    premises = list(dict.fromkeys(" ".join(p.split()) for p in (answer.premises if answer else []) if p.strip()))[: cfg.max_premises]
    premises = premises or [ctx.claim.text]
    ctx.emit(PremisesDecomposed(premises=tuple(premises)))
    ctx.emit(StageCompleted(stage="premises", detail=f"{len(premises)} premise{'s' * (len(premises) != 1)}"))
    return premises


async def _open_case(ctx: RunContext, cfg: ProClaimConfig, court: Court) -> None:
    if ctx.exhibits:  # grounded (belief.grounded): desk's exhibits, ranked, are the candidates the judge rules on
        candidates = list(ctx.exhibits[: opening_size(cfg)])
        ctx.emit(StageStarted(stage="opening retrieval", detail="the case opens on desk's exhibits, read for their stances first"))
        ctx.emit(StageCompleted(stage="opening retrieval", detail=f"{len(candidates)} candidate exhibits"))
    else:
        candidates = await _opening_candidates(ctx, cfg, court)

    who = "desk's reading rules" if _reading(ctx, cfg) is not None else "the judge rules"
    ctx.emit(StageStarted(stage="admissibility", detail=f"{who} on {len(candidates)} exhibits"))
    for item in await _rule(ctx, cfg, candidates, round=0):
        _enter(court, item)
    ctx.emit(StageCompleted(stage="admissibility", detail=_record_summary(court)))
    ctx.emit(
        RetrievalSummarized(round=0, candidates=len(candidates), joined=len(court.record), mean_novelty=None, pool_size=len(court.record))
    )


async def _opening_candidates(ctx: RunContext, cfg: ProClaimConfig, court: Court) -> list[Evidence]:
    """The opening retrieval of the paper: the top passages for each premise, then one query for each side."""
    ctx.emit(StageStarted(stage="opening retrieval", detail="top passages per premise, then one query per side"))

    async def premise_passages() -> list[Evidence]:
        found: list[Evidence] = []
        for i, premise in enumerate(court.premises, start=1):
            found += await retrieve(ctx, agent=f"Premise {i}", round=0, query=premise, tool="corpus", k=cfg.premise_top_k)
        for rewrite in await claim_rewrites(ctx):  # retrieval.rewrites: the claim put as search queries (none by default)
            found += await retrieve(ctx, agent=REWRITES, round=0, query=rewrite, tool="corpus", k=cfg.premise_top_k, rewritten=True)
        return found

    async def stance_query(counsel: CourtPersona) -> str:
        messages = load_prompt("proclaim_stance_query", __package__).render(
            role=counsel.name, brief=counsel.brief, claim=ctx.claim.text, premises=_premise_lines(court.premises)
        )
        answer = await _ask(ctx, counsel, messages, StanceQuery, stage=f"{counsel.name} query", fallback="searching with the claim")
        return _clean_query(answer.query if answer else "", ctx.claim.text)

    # The counsels' queries rest on the premises, not on what the premises found: both at once.
    found, queries = await asyncio.gather(premise_passages(), asyncio.gather(*(stance_query(c) for c in COUNSELS)))
    for counsel, query in zip(COUNSELS, queries, strict=True):
        found += await _search(ctx, agent=counsel.name, round=0, query=query, k=cfg.stance_top_k)
    candidates = list({e.id: e for e in found}.values())
    ctx.emit(StageCompleted(stage="opening retrieval", detail=f"{len(candidates)} candidate exhibits"))
    return candidates


# --- 4. Rounds


async def _plan(ctx: RunContext, cfg: ProClaimConfig, court: Court, *, round: int) -> Plan:
    """Each counsel names a gap and drafts a query (at once); the presiding judge refines both."""
    ctx.emit(StageStarted(stage=f"round {round}: queries", detail="counsels name their gaps; the presiding judge refines the queries"))
    shared = shared_context(ctx, cfg, court)
    experts = "; ".join(court.experts) or "none"

    async def gap(counsel: CourtPersona) -> EvidenceGap:
        messages = load_prompt("proclaim_gap", __package__).render(
            **shared,
            role=counsel.name,
            brief=counsel.brief,
            round=round,
            discovery_need=court.discovery.get(counsel.name) or "none yet",
            experts=experts,
        )
        answer = await _ask(ctx, counsel, messages, EvidenceGap, stage=f"{counsel.name} gap", fallback="searching with the claim")
        return answer or EvidenceGap(gap="", query=ctx.claim.text)

    gaps = dict(zip([c.name for c in COUNSELS], await asyncio.gather(*(gap(c) for c in COUNSELS)), strict=True))
    drafts = {side: _clean_query(g.query, ctx.claim.text) for side, g in gaps.items()}
    messages = load_prompt("proclaim_docket", __package__).render(
        **shared,
        round=round,
        plaintiff_gap=gaps[PLAINTIFF.name].gap or "none",
        plaintiff_query=drafts[PLAINTIFF.name],
        defense_gap=gaps[DEFENSE.name].gap or "none",
        defense_query=drafts[DEFENSE.name],
    )
    docket = await _ask(ctx, PRESIDING_JUDGE, messages, QueryDocket, stage="presiding judge", fallback="using the counsels' own queries")
    queries = dict(drafts)
    if docket is not None:
        queries = {
            PLAINTIFF.name: _clean_query(docket.plaintiff_query, drafts[PLAINTIFF.name]),
            DEFENSE.name: _clean_query(docket.defense_query, drafts[DEFENSE.name]),
        }
    plan = Plan(
        queries=queries,
        gaps={side: g.gap.strip() for side, g in gaps.items()},
        experts={side: g.expert_field.strip() for side, g in gaps.items() if g.expert_field.strip()},
        ready=bool(docket and docket.ready_to_deliberate),
        reason=" ".join(docket.reason.split()) if docket else "",
    )
    ctx.emit(StageCompleted(stage=f"round {round}: queries", detail="; ".join(f"{s}: {q}" for s, q in queries.items())))
    return plan


async def _progressive_retrieval(ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int, plan: Plan) -> set[str]:
    """Retrieve for both counsels (and any checker queries); novel items join after admissibility. Returns the ids that joined."""
    ctx.emit(StageStarted(stage=f"round {number}: retrieval", detail="progressive retrieval; only novel exhibits join"))
    found: list[Evidence] = []
    for side, query in plan.queries.items():
        found += await _search(ctx, agent=side, round=number, query=query, k=cfg.round_top_k, rewritten=True)
    for query in plan.extra_queries:
        found += await _search(ctx, agent=HUMAN_CHECKER, round=number, query=query, k=cfg.round_top_k)
    candidates = list({e.id: e for e in found}.values())
    known = [e for e in candidates if e.id in court.record]  # already in the pool: nothing new (novelty 0)
    fresh = [e for e in candidates if e.id not in court.record]
    joined, results = await filter_novel(ctx, fresh, list(court.record.values()), round=number, threshold=cfg.novelty_admit_at)
    to_rule = [e for e in joined if e.id not in court.assessed]
    ruled = await _rule(ctx, cfg, to_rule, round=number)
    for e in joined:  # an item ruled on in an earlier round keeps that ruling
        if e.id in court.assessed and e.id not in {r.id for r in ruled}:
            previous = court.assessed[e.id].admissibility
            ruled.append(e.model_copy(update={"admissibility": previous}))
            ctx.pool[e.id] = ruled[-1]
    before = set(court.record)
    for item in ruled:
        _enter(court, item)
    new_ids = set(court.record) - before
    novelties = [0.0] * len(known) + [r.novelty for r in results]
    mean = float(np.mean(novelties)) if novelties else None
    court.round_means.append(mean)
    ctx.emit(
        RetrievalSummarized(round=number, candidates=len(candidates), joined=len(new_ids), mean_novelty=mean, pool_size=len(court.record))
    )
    ctx.emit(StageCompleted(stage=f"round {number}: retrieval", detail=f"{len(new_ids)} new exhibits; {_record_summary(court)}"))
    return new_ids


async def _expert_witness(ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int, plan: Plan) -> None:
    """At most one expert per round: the presiding judge rules on each request in turn; a granted one testifies."""
    if not cfg.expert_witness or not plan.experts or len(court.experts) >= cfg.max_experts:
        return
    ctx.emit(StageStarted(stage=f"round {number}: expert witness", detail="the presiding judge rules on expert requests"))
    for side, field_name in plan.experts.items():
        messages = load_prompt("proclaim_expert_ruling", __package__).render(
            claim=ctx.claim.text, requested_by=side, field=field_name, experts="; ".join(court.experts) or "none"
        )
        ruling = await _ask(ctx, PRESIDING_JUDGE, messages, ExpertRuling, stage="expert ruling", fallback="no expert is heard")
        granted = bool(ruling and ruling.granted and ruling.persona.strip())
        persona = " ".join(ruling.persona.split()) if ruling else ""
        ctx.emit(
            ExpertWitnessRuled(
                round=number,
                requested_by=side,
                field=field_name,
                granted=granted,
                persona=persona if granted else "",
                reason=" ".join(ruling.reason.split()) if ruling else "no valid ruling",
            )
        )
        if not granted:
            continue
        messages = load_prompt("proclaim_testimony", __package__).render(
            **shared_context(ctx, cfg, court), persona=persona, field=field_name, round=number
        )
        turn = await stream_turn(ctx, agent=EXPERT_WITNESS.name, round=number, messages=messages, role=EXPERT_WITNESS.model_role)
        court.experts.append(f"{field_name} ({persona})")
        court.testimony.append(f"{persona}: {strip_label_line(turn.text)}")
        court.messages.append((f"Expert witness ({field_name}), round {number}", turn.text))
        break
    ctx.emit(StageCompleted(stage=f"round {number}: expert witness"))


async def _arguments(
    ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int, *, switched: bool = False, turn_round: int | None = None
) -> dict[str, Turn]:
    """Both counsels argue at once, each answering the other's previous argument (their turns in ``turn_round``, else ``number``)."""
    stage = "role switch: arguments" if switched else f"round {number}: arguments"
    ctx.emit(StageStarted(stage=stage, detail="both counsels argue, citing exhibits"))
    shared = shared_context(ctx, cfg, court)

    async def argue(counsel: CourtPersona, side: CourtPersona) -> tuple[str, Turn]:
        agent = f"{counsel.name} → {side.name}" if switched else counsel.name
        note = (
            f"Until now you argued as the {counsel.name}; the sides are swapped, so argue as the {side.name} as well as the exhibits allow."
            if switched
            else ""
        )
        messages = load_prompt("proclaim_argument", __package__).render(**shared, role=side.name, brief=side.brief, round=number, note=note)
        turn = await stream_turn(ctx, agent=agent, round=turn_round or number, messages=messages, role=counsel.model_role)
        return counsel.name, turn

    pairs = [(c, _opponent(c)) if switched else (c, c) for c in COUNSELS]
    turns = dict(await asyncio.gather(*(argue(counsel, side) for counsel, side in pairs)))
    for counsel, side in pairs:
        label = f"{counsel.name} as {side.name}" if switched else counsel.name
        court.messages.append((f"{label}, round {number}", turns[counsel.name].text))
        if not switched:
            court.turns.setdefault(counsel.name, []).append(turns[counsel.name])
    ctx.emit(StageCompleted(stage=stage))
    return turns


async def _reflections(ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int, turns: dict[str, Turn], new_ids: set[str]) -> None:
    ctx.emit(StageStarted(stage=f"round {number}: reflection", detail="each counsel reflects on its argument"))
    shared = shared_context(ctx, cfg, court)  # this round's arguments are the debate's last messages
    weights = (cfg.logic_weight, cfg.novelty_weight, cfg.rebuttal_weight)

    async def reflect(counsel: CourtPersona) -> None:
        turn = turns[counsel.name]
        messages = load_prompt("proclaim_reflection", __package__).render(
            **shared,
            role=counsel.name,
            opponent=_opponent(counsel).name,
            round=number,
            new_exhibits=", ".join(sorted(new_ids, key=_id_number)) or "none",
        )
        answer = await _ask(ctx, counsel, messages, SelfReflection, stage=f"{counsel.name} reflection", fallback="no s_ref this round")
        if answer is None:
            return
        s_ref = reflection_score(answer.logic, answer.novelty, answer.rebuttal, weights)
        need = " ".join(answer.discovery_need.split())
        court.s_ref.setdefault(counsel.name, []).append(s_ref)
        court.discovery[counsel.name] = need
        ctx.emit(
            ReflectionScored(
                agent=counsel.name,
                round=number,
                logic=answer.logic,
                novelty=answer.novelty,
                rebuttal=answer.rebuttal,
                s_ref=s_ref,
                discovery_need=need,
            )
        )
        ctx.emit(
            ScoreComputed(
                target=turn.id,
                metric="s_ref",
                value=round(s_ref, 4),
                detail=f"{weights[0]} × logic {answer.logic:.2f} + {weights[1]} × novelty {answer.novelty:.2f} + {weights[2]} × rebuttal {answer.rebuttal:.2f}",
            )
        )

    await asyncio.gather(*(reflect(c) for c in COUNSELS))
    ctx.emit(StageCompleted(stage=f"round {number}: reflection"))


async def _critic(ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int) -> None:
    ctx.emit(StageStarted(stage=f"round {number}: critic", detail="the critic scores both sides"))
    messages = load_prompt("proclaim_critic", __package__).render(**shared_context(ctx, cfg, court), round=number)
    report = await _ask(ctx, CRITIC, messages, CriticReport, stage="critic", fallback="the debate goes on")
    court.critic = report
    if report is not None:
        ctx.emit(
            CriticRuled(
                round=number,
                scores={PLAINTIFF.name: report.plaintiff_score, DEFENSE.name: report.defense_score},
                resolved=report.resolved,
                leaning=report.leaning,
                reason=" ".join(report.reason.split()),
            )
        )
    ctx.emit(StageCompleted(stage=f"round {number}: critic", detail=f"resolved: {report.resolved}" if report else "no report"))


def _stop_rules(cfg: ProClaimConfig, court: Court, number: int) -> list[tuple[str, str]]:
    """The rules that fire after round ``number`` (none before the first stop-check round), in the method's order."""
    if number < cfg.first_stop_check_round:
        return []
    fired: list[tuple[str, str]] = []
    histories = [court.s_ref.get(c.name, []) for c in COUNSELS]
    if all(has_plateaued(h, cfg.plateau_delta, cfg.plateau_rounds) for h in histories):
        changes = ", ".join(
            f"{c.name} " + " → ".join(f"{v:.3f}" for v in h[-(cfg.plateau_rounds + 1) :]) for c, h in zip(COUNSELS, histories, strict=True)
        )
        fired.append(("reflection plateau", f"|Δs_ref| < {cfg.plateau_delta} for {cfg.plateau_rounds} rounds ({changes})"))
    if cfg.critic_can_resolve and court.critic is not None and court.critic.resolved:
        fired.append(("critic resolution", " ".join(court.critic.reason.split()) or "the critic declared the debate resolved"))
    if novelty_exhausted(court.round_means, cfg.novelty_exhausted_below, cfg.novelty_exhausted_retrievals):
        means = ", ".join("none found" if m is None else f"{m:.3f}" for m in court.round_means[-cfg.novelty_exhausted_retrievals :])
        fired.append(
            (
                "novelty exhaustion",
                f"mean novelty < {cfg.novelty_exhausted_below} for {cfg.novelty_exhausted_retrievals} retrievals ({means})",
            )
        )
    return fired


async def _admit_from_checker(ctx: RunContext, cfg: ProClaimConfig, court: Court, number: int, items: list[Evidence]) -> None:
    """Evidence a checker added is admitted by the checker's authority; the court's own ruling is kept beside it."""
    for item in await _rule(ctx, cfg, items, round=number):
        assert item.admissibility is not None
        ruling = item.admissibility.model_copy(
            update={
                "status": "admitted",
                "reason": f"admitted by the checker (ruled {item.admissibility.status}: {item.admissibility.reason})",
            }
        )
        admitted = item.model_copy(update={"admissibility": ruling})
        ctx.pool[item.id] = admitted
        ctx.emit(AdmissibilityAssessed(evidence_id=item.id, round=number, admissibility=ruling))
        _enter(court, admitted)


async def _rule(ctx: RunContext, cfg: ProClaimConfig, items: list[Evidence], *, round: int) -> list[Evidence]:
    """Each item's admissibility: from desk's reading where the court keeps it (``relevance_from``), else the judge's rating."""
    admit, discard = cfg.admit_above, cfg.discard_at_or_below
    if (weighing := _reading(ctx, cfg)) is not None:
        return await assess_from_reading(ctx, weighing, items, round=round, admit_above=admit, discard_at_or_below=discard)
    return await assess_admissibility(ctx, items, round=round, admit_above=admit, discard_at_or_below=discard)


def _reading(ctx: RunContext, cfg: ProClaimConfig) -> Weighing | None:
    """desk's readings the court rules from (``relevance_from`` stance, a weighed belief keeps them), or None: the judge rates."""
    return weighs(ctx) if cfg.relevance_from == "stance" else None


def opening_size(cfg: ProClaimConfig) -> int:
    """How many candidates the case opens on: the paper's top k per premise and per side's query (of desk's exhibits, grounded)."""
    return cfg.max_premises * cfg.premise_top_k + len(COUNSELS) * cfg.stance_top_k


# --- 6. Role switch


async def _role_switch(ctx: RunContext, cfg: ProClaimConfig, court: Court, *, after_round: int) -> float:
    """Counsels swap sides and argue again from the admitted evidence; gamma rates the consistency.

    Its turns are numbered on after the debate's rounds (``after_round + 1``, ...) under sections of
    their own, so a transcript never shows them inside the debate's round 1."""
    ctx.emit(StageStarted(stage="role switch", detail="the counsels swap sides and argue again"))
    original = _final_arguments(court)
    switched_messages: list[str] = []
    switched_turns: list[Turn] = []
    for number in range(1, cfg.role_switch_rounds + 1):
        section = after_round + number
        ctx.emit(RoundStarted(round=section, title="Role switch" + (f", round {number}" if cfg.role_switch_rounds > 1 else "")))
        turns = await _arguments(ctx, cfg, court, number, switched=True, turn_round=section)
        switched_messages += [f"{c.name} as {_opponent(c).name}, switched round {number}:\n{turns[c.name].text}" for c in COUNSELS]
        switched_turns += [turns[c.name] for c in COUNSELS]
    # The judge's belief once each counsel has argued the other side too: did hearing both cases from each move it?
    await _read_court_belief(ctx, court, round=after_round + cfg.role_switch_rounds, what="after the role switch", more=switched_turns)
    messages = load_prompt("proclaim_consistency", __package__).render(
        claim=ctx.claim.text, original=original, switched="\n\n".join(switched_messages)
    )
    rating = await _ask(ctx, PRESIDING_JUDGE, messages, ConsistencyRating, stage="role switch", fallback="delta_rs is 0")
    if rating is None:
        ctx.emit(StageCompleted(stage="role switch", detail="no consistency score"))
        return 0.0
    delta = role_switch_delta(rating.gamma, cfg.gamma_high, cfg.gamma_mid, cfg.delta_rs_high, cfg.delta_rs_mid, cfg.delta_rs_low)
    ctx.emit(RoleSwitchScored(gamma=rating.gamma, delta_rs=delta, reason=" ".join(rating.reason.split())))
    ctx.emit(StageCompleted(stage="role switch", detail=f"gamma {rating.gamma:.1f} → delta_rs {delta:+.2f}"))
    return delta


async def _read_court_belief(ctx: RunContext, court: Court, *, round: int, what: str, more: Sequence[Turn] = ()) -> None:
    """The judge's belief over the debate's turns so far (then ``more``, the role switch's) and the record's usable exhibits."""
    argued = sorted((t for ts in court.turns.values() for t in ts), key=lambda t: t.round) + list(more)
    await read_belief(ctx, round=round, turns=argued, evidence=ranked_record(ctx.usable(list(court.record.values()))), what=what)


# --- Premise checklist


async def _premise_checklist(ctx: RunContext, cfg: ProClaimConfig, court: Court) -> None:
    """A premise is addressed by a turn when one of its sentences is close in meaning (cosine >= threshold)."""
    turns = [t for ts in court.turns.values() for t in ts]
    sentences = [(t.id, s) for t in turns for s in _sentences(strip_label_line(t.text))]
    vectors = await asyncio.to_thread(ctx.tools.embedder.embed, court.premises + [s for _, s in sentences])
    premise_vectors, sentence_vectors = vectors[: len(court.premises)], vectors[len(court.premises) :]
    for i, (premise, vector) in enumerate(zip(court.premises, premise_vectors, strict=True), start=1):
        sims = sentence_vectors @ vector if len(sentences) else np.zeros(0)
        by_turn: dict[str, float] = {}
        for (turn_id, _), sim in zip(sentences, sims, strict=True):
            by_turn[turn_id] = max(by_turn.get(turn_id, -1.0), float(sim))
        best = max(by_turn.values(), default=0.0)
        addressing = tuple(t for t, s in by_turn.items() if s >= cfg.premise_addressed_at)
        ctx.emit(PremiseChecked(index=i, premise=premise, addressed=bool(addressing), similarity=round(best, 4), turns=addressing))


# --- 7-8. Panel and confidence


async def _seat_panel(ctx: RunContext, cfg: ProClaimConfig) -> list[JudgeSeat]:
    seats = []
    for number, role in enumerate(PANEL, start=1):
        overrides = cfg.panel_seat(number)
        if "backend" in overrides:
            get_backend(overrides["backend"])  # an unknown name fails now, listing the valid ones
        llm = await ctx.seat_llm(role.model_role, overrides)
        backend = overrides.get("backend", ctx.config.role(role.model_role).backend)
        seats.append(JudgeSeat(name=role.name, outlook=role.brief, llm=llm, model=f"{backend}: {llm.model_name}"))
    return seats


def _panel_prompts(ctx: RunContext, cfg: ProClaimConfig, court: Court, seats: Sequence[JudgeSeat]) -> dict[str, list[BaseMessage]]:
    """Each judge's prompt, taken from the court as the debate proper left it (before the role switch adds its turns)."""
    shared, record = shared_context(ctx, cfg, court), _panel_record(court)
    return {
        seat.name: load_prompt("panel_judgment", __package__).render(**shared, judge=seat.name, outlook=seat.outlook, record=record)
        for seat in seats
    }


async def _convene(ctx: RunContext, seats: Sequence[JudgeSeat], messages_for: dict[str, list[BaseMessage]]) -> list[Ballot]:
    ctx.emit(StageStarted(stage="panel", detail=f"{len(seats)} judges deliberate at once"))
    return await convene_panel(ctx, seats, messages_for)


def _deliberate(ctx: RunContext, cfg: ProClaimConfig, court: Court, ballots: list[Ballot], delta_rs: float, last_round: int) -> Verdict:
    if not ballots:
        raise StageFailedError("panel", "no judge gave a valid ruling; try another judge model or more retries")
    outcome = majority_vote(ballots, cfg.tie_break)
    winner = {PLAINTIFF.stance: PLAINTIFF.name, DEFENSE.stance: DEFENSE.name}.get(outcome.label)
    s_ref = court.s_ref[winner][-1] if winner and court.s_ref.get(winner) else None
    confidence = panel_confidence(outcome, [b.mean_quality for b in ballots], delta_rs=delta_rs, s_ref=s_ref, cfg=cfg)
    ctx.emit(confidence)
    ctx.emit(StageCompleted(stage="panel", detail=f"{outcome.label} ({_tally(outcome.counts)})"))
    return Verdict(
        label=outcome.label,
        confidence=round(confidence.c_final, 4),
        rationale=_rationale(ballots, outcome.label),
        cited=_verdict_citations(ctx, court, winner),
        decided_by=f"panel of {outcome.total_votes} judge{'s' * (outcome.total_votes != 1)} ({_tally(outcome.counts)})"
        + (f"; {outcome.tie_break}" if outcome.tie_break else ""),
        stop_reason=f"debate ended after round {last_round} by {court.stop_detail}",
    )


def _panel_record(court: Court) -> str:
    lines = []
    if court.critic is not None:
        lines.append(
            f"Critic's last report: Plaintiff {court.critic.plaintiff_score:.1f}/10, Defense {court.critic.defense_score:.1f}/10, "
            f"leaning {court.critic.leaning}; {court.critic.reason}"
        )
    for side, scores in court.s_ref.items():
        lines.append(f"{side}'s self-reflection s_ref by round: " + ", ".join(f"{s:.2f}" for s in scores))
    if court.testimony:
        lines.append("Expert testimony: " + " | ".join(court.testimony))
    lines.append(f"The debate ended by {court.stop_detail or 'max rounds'}.")
    return "\n".join(" ".join(line.split()) for line in lines)


def _rationale(ballots: list[Ballot], label: str) -> str:
    agreeing = [b for b in ballots if b.judgment.vote == label] or ballots
    return "\n\n".join(f"{b.judge}: {' '.join(b.judgment.reasoning.split())}" for b in agreeing)


def _final_arguments(court: Court) -> str:
    """Each counsel's last argument of the debate proper (not the role switch)."""
    last = [ts[-1] for ts in court.turns.values() if ts]
    return "\n\n".join(f"{t.agent}, round {t.round}:\n{t.text}" for t in last) or "(no arguments)"


def _verdict_citations(ctx: RunContext, court: Court, winner: str | None) -> tuple[str, ...]:
    """The exhibits the winning side's last argument cited (both sides' when no side won), if still usable."""
    sides = [winner] if winner else [c.name for c in COUNSELS]
    cited = [eid for side in sides for turn in court.turns.get(side, [])[-1:] for eid in turn.cited]
    usable = {e.id for e in ctx.usable(list(court.record.values()))}
    return tuple(dict.fromkeys(eid for eid in cited if eid in usable))


# --- Helpers


async def _ask(
    ctx: RunContext, role: CourtPersona, messages: Sequence[BaseMessage], schema: type[T], *, stage: str, fallback: str
) -> T | None:
    """A structured answer, or None after a StageFailed event that says what the run does instead."""
    try:
        return await ctx.llm(role.model_role).structured(messages, schema)
    except ModelOutputError as exc:
        ctx.emit(StageFailed(stage=stage, reason=f"{exc}; {fallback}"))
        return None


async def _search(ctx: RunContext, *, agent: str, round: int, query: str, k: int, rewritten: bool = False) -> list[Evidence]:
    found = await retrieve(ctx, agent=agent, round=round, query=query, tool="corpus", k=k, rewritten=rewritten)
    if ctx.config.retrieval.web_search:
        found += await retrieve(ctx, agent=agent, round=round, query=query, tool="web", k=min(k, ctx.config.retrieval.web_top_k))
    return found


def _enter(court: Court, item: Evidence) -> None:
    court.assessed[item.id] = item
    if item.admissibility is not None and item.admissibility.status != "discarded":
        court.record[item.id] = item


def shared_context(ctx: RunContext, cfg: ProClaimConfig, court: Court) -> dict[str, str]:
    """What every call of the court's debate opens with, word for word: the exhibits, the claim, the premises, the debate so far.

    The counsels' gaps and arguments, the presiding judge's docket, an expert's testimony, the
    reflections, the critic and the panel read the same block and their own instructions after it,
    so llama.cpp's prompt cache reads the exhibits once a round and each argument once, however
    many calls follow. The exhibits are listed in the order they joined, so one joining later adds
    a line at the end rather than reordering what the cache holds.
    """
    return {
        "exhibits": _show(ctx, cfg, court),
        "claim": ctx.claim.text,
        "premises": _premise_lines(court.premises),
        "history": _history(court),
    }


def _show(ctx: RunContext, cfg: ProClaimConfig, court: Court) -> str:
    """The exhibits a model sees: the usable ones of most weight (admitted before disputed), in the order they joined the
    record, each line ending in its status, w and c (or that c was not rated, where r came from desk's reading)."""
    weightiest = {e.id for e in ranked_record(ctx.usable(list(court.record.values())))[: cfg.exhibits_in_prompt]}
    lines = []
    for e in (e for e in court.record.values() if e.id in weightiest):
        a = e.admissibility
        assert a is not None
        credibility = "c not rated" if a.reason.startswith(FROM_READING) else f"c={a.credibility:.2f}"
        lines.append(f"{format_evidence([e])} ({a.status}; w={a.weight:.2f}; {credibility})")
    return "\n".join(lines) or format_evidence([])


def _history(court: Court) -> str:
    """The debate's last messages, one line each and whole, so the call after an argument reads it as its predecessor left it."""
    recent = court.messages[-HISTORY_MESSAGES:]
    if not recent:
        return "(no arguments yet)"
    return "\n".join(f"{speaker}: {' '.join(text.split())}" for speaker, text in recent)


def _premise_lines(premises: list[str]) -> str:
    return "\n".join(f"P{i}. {p}" for i, p in enumerate(premises, start=1))


def _clean_query(query: str, fallback: str) -> str:
    cleaned = " ".join(query.replace('"', " ").split())[:300]
    return cleaned or fallback[:300]


def _opponent(counsel: CourtPersona) -> CourtPersona:
    return DEFENSE if counsel is PLAINTIFF else PLAINTIFF


def _record_summary(court: Court) -> str:
    statuses = [e.admissibility.status for e in court.assessed.values() if e.admissibility]
    return ", ".join(f"{statuses.count(s)} {s}" for s in ("admitted", "disputed", "discarded"))


def _tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {label}" for label, n in counts.items() if n) or "no votes"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if len(s.strip()) > 3]


def _id_number(evidence_id: str) -> int:
    digits = "".join(ch for ch in evidence_id if ch.isdigit())
    return int(digits) if digits else 0
