"""`proclaim` on the fake backend: the stage sequence, each stop rule alone, role switch, the panel's failures."""

from __future__ import annotations

import asyncio
import re
from itertools import pairwise
from typing import Any

import pytest

from pipelines.core import events as ev
from pipelines.core.config import ROLES, RunConfig
from pipelines.core.domain import Claim
from pipelines.protocols.proclaim.fake import evidence_gap
from pipelines.protocols.proclaim.run import run_proclaim
from pipelines.run.context import Review, RunContext, Toolbox
from pipelines.run.llm import fake
from pipelines.run.llm.client import LLM
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import DeadWeb, RecordingChat, ScriptedFake, make_context, protocol_config

CLAIM = "Masks reduce transmission of respiratory viruses"
QUIET = {"plateau_delta": 0.0, "novelty_exhausted_below": 0.0, "critic_can_resolve": False, "judge_can_close": False}


def court_config(quiet: bool = False, **proclaim: Any) -> RunConfig:
    """The fake backend on `proclaim`; ``quiet`` turns every stop rule but max rounds off."""
    return protocol_config("proclaim", **{**(QUIET if quiet else {}), **proclaim})


def run(services: Services, config: RunConfig, chat: ScriptedFake | None = None, claim: str = CLAIM) -> list[ev.Event]:
    services.chat_override = chat
    services.store = None  # persistence is the runner's concern (tested there); it triples these tests' time
    return list(stream_run(claim, config, services))


def of(events: list[ev.Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def stopped(events: list[ev.Event]) -> ev.DebateStopped:
    (stop,) = of(events, ev.DebateStopped)
    return stop


def test_stage_sequence_from_premises_to_a_panel_verdict(services: Services) -> None:
    events = run(services, court_config())
    kinds = [type(e) for e in events]
    order = [
        ev.PremisesDecomposed,
        ev.QueryIssued,
        ev.AdmissibilityAssessed,
        ev.RoundStarted,
        ev.DebateStopped,
        ev.ConfidenceComputed,
        ev.VerdictReached,
    ]
    positions = [kinds.index(k) for k in order]
    assert positions == sorted(positions), [k.__name__ for k in order]
    # run at once, so in either order: the reflections and the critic; the role switch, the premise checklist and the panel
    for kind in (ev.ReflectionScored, ev.CriticRuled):
        assert kinds.index(ev.RoundStarted) < kinds.index(kind) < kinds.index(ev.DebateStopped), kind.__name__
    for kind in (ev.RoleSwitchScored, ev.PremiseChecked, ev.VoteCast):
        assert kinds.index(ev.DebateStopped) < kinds.index(kind) < kinds.index(ev.ConfidenceComputed), kind.__name__
    stages = [e.stage for e in of(events, ev.StageStarted)]
    assert stages[:3] == ["premises", "opening retrieval", "admissibility"]
    assert {"round 1: retrieval", "round 1: arguments", "round 1: reflection", "round 1: critic", "role switch", "panel"} <= set(stages)
    # the opening retrieval: one query per premise, then one per side
    opening = [q for q in of(events, ev.QueryIssued) if q.round == 0]
    assert [q.agent for q in opening] == ["Premise 1", "Plaintiff", "Plaintiff", "Defense", "Defense"]  # corpus, then the (dead) web
    # every candidate of the opening is ruled on; round 1 retrieval is novelty-gated
    opening_ids = {e.evidence.id for e in of(events, ev.EvidenceRetrieved) if e.round == 0}
    assert {a.evidence_id for a in of(events, ev.AdmissibilityAssessed) if a.round == 0} == opening_ids
    assert all(n.round >= 1 for n in of(events, ev.NoveltyAssessed))
    # both counsels argue every round, citing exhibits
    turns = [t.turn for t in of(events, ev.TurnCompleted)]
    switch = stopped(events).round + 1  # the role switch's section follows the debate's last round
    assert {"Plaintiff-r1", "Defense-r1", f"Plaintiff → Defense-r{switch}", f"Defense → Plaintiff-r{switch}"} <= {t.id for t in turns}
    assert all(t.cited for t in turns if t.agent in ("Plaintiff", "Defense"))
    confidence = of(events, ev.ConfidenceComputed)[0]
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.label == confidence.label == "SUPPORTED" and verdict.confidence == pytest.approx(confidence.c_final, abs=1e-4)
    assert len(of(events, ev.VoteCast)) == 3 and confidence.total_votes == 3
    assert verdict.cited and "panel of 3 judges" in verdict.decided_by and stopped(events).rule in verdict.stop_reason


def test_independent_calls_run_at_once(services: Services) -> None:
    chat = ScriptedFake(latency_s=0.25)  # long enough that calls started together still overlap on a busy machine
    config = court_config(quiet=True, max_rounds=1)
    # Room for every call the court makes at once (the panel's three and the counsels' two): at the endpoint's default 4
    # the third judge waits for a counsel to finish, and on a loaded machine may start after the first judge has ruled.
    wide = {role: config.role(role).model_copy(update={"concurrency": 8}) for role in ROLES}
    run(services, config.model_copy(update=wide), chat)
    judges = [i for i, (name, _) in enumerate(chat.prompts) if name == "PanelJudgment"]
    assert max(chat.in_flight_at[i] for i in judges) >= 3, "the three judges rule at once"
    assert max(chat.in_flight_at[i] for i in judges) >= 4, "the panel deliberates while the counsels argue the other side"
    critic = [i for i, (name, _) in enumerate(chat.prompts) if name == "CriticReport"]
    assert chat.in_flight_at[critic[0]] >= 2, "the critic scores the arguments while the counsels reflect on them"
    arguments = [i for i, (name, text) in enumerate(chat.prompts) if name == "text" and "Make your argument" in text]
    assert max(chat.in_flight_at[i] for i in arguments[:2]) == 2, "both counsels argue at once"
    admissibility = [i for i, (name, _) in enumerate(chat.prompts) if name == "AdmissibilityRating"]
    assert len(admissibility) >= 3 and max(chat.in_flight_at[i] for i in admissibility) >= 3, "exhibits are ruled on at once"


# --- Each stop rule on its own


def test_max_rounds_alone(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=3))
    assert [r.round for r in of(events, ev.RoundStarted) if not r.title] == [1, 2, 3]
    assert (stopped(events).rule, stopped(events).round) == ("max rounds", 3)


def test_max_rounds_of_one_stops_before_any_stop_check(services: Services) -> None:
    assert (stopped(run(services, court_config(max_rounds=1))).rule, 1) == ("max rounds", 1)


def test_critic_resolution_alone_and_never_before_round_two(services: Services) -> None:
    resolved = {
        "plaintiff_score": 8,
        "defense_score": 2,
        "resolved": True,
        "leaning": "SUPPORTED",
        "reason": "the Plaintiff's exhibits decide it",
    }
    events = run(services, court_config(quiet=True, critic_can_resolve=True), ScriptedFake(answers={"CriticReport": resolved}))
    assert [c.resolved for c in of(events, ev.CriticRuled)] == [True, True]  # resolved after round 1 too, but not checked
    assert (stopped(events).rule, stopped(events).round) == ("critic resolution", 2)
    assert "decide it" in stopped(events).detail


def test_first_stop_check_round_is_configurable(services: Services) -> None:
    resolved = {"plaintiff_score": 8, "defense_score": 2, "resolved": True, "leaning": "SUPPORTED", "reason": "done"}
    config = court_config(quiet=True, critic_can_resolve=True, first_stop_check_round=3)
    assert stopped(run(services, config, ScriptedFake(answers={"CriticReport": resolved}))).round == 3


def test_reflection_plateau_alone(services: Services) -> None:
    events = run(services, court_config(quiet=True, plateau_delta=0.05))
    stop = stopped(events)
    assert stop.rule == "reflection plateau" and stop.round >= 3
    for side in ("Plaintiff", "Defense"):
        history = [r.s_ref for r in of(events, ev.ReflectionScored) if r.agent == side]
        assert len(history) == stop.round
        assert all(abs(b - a) < 0.05 for a, b in zip(history[-3:], history[-2:], strict=False))


def test_reflection_plateau_needs_two_small_changes(services: Services) -> None:
    # s_ref 0.40, 0.70, 0.72, 0.74: one small change after round 3, two after round 4
    values = iter([0.0, 0.0, 0.75, 0.75, 0.8, 0.8, 0.85, 0.85])

    def reflection(_: str) -> dict[str, Any]:
        logic = next(values)
        return {"logic": logic, "novelty": 1.0, "rebuttal": 1.0 if logic else 0.0, "discovery_need": ""}

    events = run(services, court_config(quiet=True, plateau_delta=0.05), ScriptedFake(answers={"SelfReflection": reflection}))
    history = [round(r.s_ref, 4) for r in of(events, ev.ReflectionScored) if r.agent == "Plaintiff"]
    assert history == [0.3, 0.9, 0.92, 0.94]
    assert (stopped(events).rule, stopped(events).round) == ("reflection plateau", 4)


def test_novelty_exhaustion_alone(services: Services) -> None:
    same_query = {"gap": "", "query": "masks reduce transmission respiratory viruses", "expert_field": ""}
    events = run(services, court_config(quiet=True, novelty_exhausted_below=0.10), ScriptedFake(answers={"EvidenceGap": same_query}))
    means = [s.mean_novelty for s in of(events, ev.RetrievalSummarized) if s.round >= 1]
    assert (stopped(events).rule, stopped(events).round) == ("novelty exhaustion", 2)
    assert all((m or 0.0) < 0.10 for m in means[-2:])


def docket(plaintiff: str, defense: str, *, ready: bool, reason: str) -> dict[str, object]:
    """The presiding judge's answer after a round: each side's next query, and whether the court is ready to deliberate."""
    return {"plaintiff_query": plaintiff, "defense_query": defense, "ready_to_deliberate": ready, "reason": reason}


def test_presiding_judge_ready_alone(services: Services) -> None:
    ready = docket("masks transmission", "mask trials limitations", ready=True, reason="nothing left to find")
    events = run(services, court_config(quiet=True, judge_can_close=True), ScriptedFake(answers={"QueryDocket": ready}))
    assert (stopped(events).rule, stopped(events).round) == ("presiding judge ready", 2)
    assert "nothing left to find" in stopped(events).detail


def test_rounds_use_the_presiding_judges_refined_queries(services: Services) -> None:
    refined = docket("surgical mask trial", "cloth mask limitations", ready=False, reason="go on")
    events = run(services, court_config(quiet=True, max_rounds=1), ScriptedFake(answers={"QueryDocket": refined}))
    round_queries = {(q.agent, q.query) for q in of(events, ev.QueryIssued) if q.round == 1 and q.tool == "corpus"}
    assert round_queries == {("Plaintiff", "surgical mask trial"), ("Defense", "cloth mask limitations")}


# --- Role switch


def test_role_switch_on_swaps_sides_and_adjusts_confidence(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=1))
    switch = of(events, ev.RoleSwitchScored)[0]
    assert switch.gamma >= 7 and switch.delta_rs == pytest.approx(0.10)
    assert {"Plaintiff → Defense", "Defense → Plaintiff"} <= {t.turn.agent for t in of(events, ev.TurnCompleted)}
    assert of(events, ev.ConfidenceComputed)[0].delta_rs == pytest.approx(0.10)


def test_role_switch_turns_have_a_section_of_their_own_after_the_debate(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=2, role_switch_rounds=2))
    debate = [e.round for e in of(events, ev.RoundStarted) if not e.title]
    sections = [(e.round, e.heading) for e in of(events, ev.RoundStarted) if e.title]
    last = max(debate)
    assert sections == [(last + 1, "Role switch, round 1"), (last + 2, "Role switch, round 2")]
    switched = [t.turn for t in of(events, ev.TurnCompleted) if "→" in t.turn.agent]
    assert sorted({t.round for t in switched}) == [last + 1, last + 2]  # never inside the debate's round 1


def test_inconsistent_role_switch_lowers_confidence(services: Services) -> None:
    chat = ScriptedFake(answers={"ConsistencyRating": {"gamma": 4, "reason": "conclusions followed the assigned sides"}})
    events = run(services, court_config(quiet=True, max_rounds=1), chat)
    assert of(events, ev.RoleSwitchScored)[0].delta_rs == pytest.approx(-0.05)
    assert of(events, ev.ConfidenceComputed)[0].delta_rs == pytest.approx(-0.05)


def test_role_switch_off(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=1, role_switch=False))
    assert not of(events, ev.RoleSwitchScored)
    assert not [t for t in of(events, ev.TurnCompleted) if "→" in t.turn.agent]
    assert of(events, ev.ConfidenceComputed)[0].delta_rs == 0.0


# --- The panel


def test_malformed_judge_is_retried_then_failed_and_the_panel_decides_without_it(services: Services) -> None:
    chat = ScriptedFake(malformed_when="You are Judge 2 ")
    events = run(services, court_config(quiet=True, max_rounds=1), chat)
    assert len(chat.prompts_for("PanelJudgment", "You are Judge 2 ")) == 3  # the first try and two retries
    failed = [f for f in of(events, ev.StageFailed) if f.stage == "panel: Judge 2"]
    assert len(failed) == 1 and "no valid PanelJudgment after 3 tries" in failed[0].reason
    assert [v.vote.judge for v in of(events, ev.VoteCast)] == ["Judge 1", "Judge 3"] or {v.vote.judge for v in of(events, ev.VoteCast)} == {
        "Judge 1",
        "Judge 3",
    }
    confidence = of(events, ev.ConfidenceComputed)[0]
    assert confidence.total_votes == 2 and confidence.winning_votes == 2
    assert isinstance(events[-1], ev.VerdictReached) and "panel of 2 judges" in events[-1].verdict.decided_by


def test_no_judge_answering_fails_the_run_with_a_reason(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=1), ScriptedFake(malformed_when="on a panel of the fact-checking court"))
    assert isinstance(events[-1], ev.RunFailed) and "no judge gave a valid ruling" in events[-1].reason
    assert len(of(events, ev.StageFailed)) == 3


def test_three_way_split_is_inconclusive_and_shown_as_a_tie_break(services: Services) -> None:
    votes = {"Judge 1": "SUPPORTED", "Judge 2": "NOT SUPPORTED", "Judge 3": "INCONCLUSIVE"}

    def judgment(prompt: str) -> dict[str, Any]:
        judge = next(j for j in votes if f"You are {j} " in prompt)
        return {
            "evidence_strength": 6,
            "argument_validity": 6,
            "source_reliability": 6,
            "vote": votes[judge],
            "reasoning": f"{judge} rules.",
        }

    events = run(services, court_config(quiet=True, max_rounds=1, role_switch=False), ScriptedFake(answers={"PanelJudgment": judgment}))
    confidence = of(events, ev.ConfidenceComputed)[0]
    assert confidence.label == "INCONCLUSIVE" and confidence.votes == {"SUPPORTED": 1, "NOT SUPPORTED": 1, "INCONCLUSIVE": 1}
    assert "split panel" in confidence.tie_break and confidence.s_ref is None and confidence.delta_ref == 0.0
    # 0.8 x 1/3 + 0.3 x 18/30
    assert confidence.c_final == pytest.approx(0.8 / 3 + 0.18)
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.label == "INCONCLUSIVE" and "split panel" in verdict.decided_by


def test_each_judge_may_run_on_its_own_model(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=1, judge_2_model="second-opinion"))
    models = {v.vote.judge: v.vote.model for v in of(events, ev.VoteCast)}
    assert models == {"Judge 1": "fake: fake", "Judge 2": "fake: second-opinion", "Judge 3": "fake: fake"}
    assert "second-opinion" in {c.model for c in of(events, ev.ModelCallCompleted)}


def test_unknown_judge_backend_fails_before_the_debate(services: Services) -> None:
    events = run(services, court_config(judge_3_backend="gpt9"))
    assert isinstance(events[-1], ev.RunFailed) and "choose one of: embedded, fake, openai" in events[-1].reason
    assert not of(events, ev.RoundStarted)


# --- Expert witness, admissibility failures


def test_expert_witness_requested_granted_and_heard_before_the_arguments(services: Services) -> None:
    def gap(prompt: str) -> dict[str, Any]:
        field = "epidemiology" if "Role: Plaintiff" in prompt else "aerosol physics"
        return {"gap": "trial evidence", "query": "mask trials", "expert_field": field}

    events = run(services, court_config(quiet=True, max_rounds=3, max_experts=2), ScriptedFake(answers={"EvidenceGap": gap}))
    rulings = of(events, ev.ExpertWitnessRuled)
    assert [(r.round, r.requested_by, r.granted) for r in rulings[:1]] == [(1, "Plaintiff", True)]
    experts = [t.turn for t in of(events, ev.TurnCompleted) if t.turn.agent == "Expert witness"]
    assert [t.round for t in experts] == [1, 2]  # one a round, at most max_experts
    kinds = [(type(e).__name__, getattr(getattr(e, "turn", None), "id", "")) for e in events]
    assert kinds.index(("TurnCompleted", "Expert witness-r1")) < kinds.index(("TurnCompleted", "Plaintiff-r1"))


def test_admissibility_failures_are_shown_and_the_run_goes_on(services: Services) -> None:
    events = run(services, court_config(quiet=True, max_rounds=1), ScriptedFake(malformed_when="Source: local corpus"))
    failures = [f for f in of(events, ev.StageFailed) if f.stage.startswith("admissibility of")]
    assert failures and not of(events, ev.AdmissibilityAssessed)
    assert isinstance(events[-1], ev.VerdictReached)


# --- Step mode: the review after each round is honoured


def run_with_reviewer(services: Services, config: RunConfig, chat: ScriptedFake, reviewer: Any) -> list[ev.Event]:
    events: list[ev.Event] = []
    llms = {role: LLM(chat, role=role, model_name="fake", max_retries=1, on_call=events.append) for role in ROLES}
    tools = Toolbox(index=services.index, web=DeadWeb(), embedder=services.embedder)  # type: ignore[arg-type]
    ctx = RunContext(run_id="t", claim=Claim(text=CLAIM), config=config, llms=llms, tools=tools, emit=events.append, reviewer=reviewer)
    events.append(ev.VerdictReached(verdict=asyncio.run(run_proclaim(ctx))))
    return events


def test_review_edits_queries_strikes_evidence_and_stops(services: Services) -> None:
    calls: list[tuple[int, dict[str, str]]] = []
    struck: dict[str, str] = {}

    async def reviewer(number: int, next_queries: dict[str, str], plan: object = None) -> Review:
        calls.append((number, dict(next_queries)))
        if number == 0:  # the premises, before any search: left as they are
            assert plan is not None
            return Review()
        if number == 1:
            struck["E1"] = "unreliable"
            return Review(queries={"Defense": "cochrane review masks"}, struck=dict(struck))
        return Review(stop=True)

    chat = ScriptedFake()
    events = run_with_reviewer(services, court_config(quiet=True, max_rounds=5), chat, reviewer)
    assert [n for n, _ in calls] == [0, 1, 2] and set(calls[1][1]) == {"Plaintiff", "Defense"}
    assert ("Defense", "cochrane review masks") in {(q.agent, q.query) for q in of(events, ev.QueryIssued) if q.round == 2}
    assert (stopped(events).rule, stopped(events).round) == ("checker", 2)

    def exhibits(text: str) -> set[str]:
        return set(re.findall(r"^\[(E\d+)\]", text, flags=re.MULTILINE))

    round_one = [t for name, t in chat.prompts if name == "text" and "Round: 1" in t]
    after_review = [
        t for name, t in chat.prompts if (name in ("text", "SelfReflection", "CriticReport") and "Round: 2" in t) or name == "PanelJudgment"
    ]
    assert any("E1" in exhibits(t) for t in round_one), "E1 was before the court in round 1"
    assert after_review and not any("E1" in exhibits(t) for t in after_review), "struck evidence is never shown again"


COURT_CALLS = {  # what each of the court's calls says after the shared opening
    "gap": "Name the most important evidential gap",
    "docket": "You are the presiding judge of the fact-checking court above",
    "testimony": "Give your testimony.",
    "argument": "Make your argument.",
    "reflection": "reflecting on your own argument",
    "critic": "You are the critic of the fact-checking court above",
    "panel": "on a panel of the fact-checking court above",
}


async def test_the_courts_calls_open_with_one_block_that_only_grows_between_joinings(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gaps, the docket, an expert's testimony, the arguments, the reflections, the critic and the panel read the same
    opening, word for word: the exhibits in the order they joined, the claim, the premises, the debate so far; their own
    instructions after it. So the server's prompt cache reads the exhibits once a round and each argument once: a call's
    opening is the one before it, or it with what was said since, or (after new exhibits joined) it with lines added to the
    exhibits."""
    monkeypatch.setitem(fake.RESPONDERS, "EvidenceGap", lambda view, schema: {**evidence_gap(view, schema), "expert_field": "epidemiology"})
    chat = RecordingChat()
    services.chat_override = chat
    ctx, events = make_context(services, court_config(quiet=True, max_rounds=2, exhibits_in_prompt=60), CLAIM)
    await run_proclaim(ctx)  # type: ignore[arg-type]

    court = [(system, user) for system, user in chat.sent if system.startswith("Exhibits before the court")]
    kinds = [next((kind for kind, words in COURT_CALLS.items() if words in user), "?") for _, user in court]
    granted = sum(e.granted for e in events if isinstance(e, ev.ExpertWitnessRuled))
    assert granted and [kinds.count(kind) for kind in COURT_CALLS] == [4, 2, granted, 6, 4, 2, 3], kinds
    assert all(not re.search(r"You are|Answer with JSON|Role:|Round:", system) for system, _ in court), "instructions come after"
    exhibits = [system.split("\n\nClaim:")[0] for system, _ in court]
    assert all(later.startswith(earlier) for earlier, later in pairwise(exhibits)), "an exhibit joining adds a line at the end"
    for (earlier, _), (later, _) in pairwise(court):
        same_exhibits = later.split("\n\nClaim:")[0] == earlier.split("\n\nClaim:")[0]
        grown = later.startswith(earlier.removesuffix("(no arguments yet)"))
        assert grown or not same_exhibits, "between joinings the opening only grows"
    for round_number in (1, 2):
        read_after = [system for (system, _), kind in zip(court, kinds, strict=True) if kind in ("reflection", "critic")]
        assert all(
            f"Plaintiff, round {round_number}: " in s and f"Defense, round {round_number}: " in s
            for s in read_after[3 * (round_number - 1) : 3 * round_number]
        )
    panel = {system for (system, _), kind in zip(court, kinds, strict=True) if kind == "panel"}
    assert len(panel) == 1 and " as Defense, round" not in panel.pop(), "the judges read the debate proper, not the role switch"
