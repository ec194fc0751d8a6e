"""`radar` on the fake backend: stage order, the dual-threshold stop rule, the sampling fallback, the review hook."""

from itertools import pairwise

import pytest

from pipelines.core.events import (
    EvidenceRetrieved,
    LabelProbabilitiesEstimated,
    OmittedContextFound,
    QueryIssued,
    RoundStarted,
    StageStarted,
    StopRuleChecked,
    TurnCompleted,
    VerdictReached,
)
from pipelines.protocols.madke.run import run_madke
from pipelines.protocols.radar.run import run_radar, should_stop, stop_margin
from pipelines.run.context import Review
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.stages.debate_history import NO_HISTORY
from pipelines.stages.label_probability import LabelDistribution
from tests.fakes import RecordingChat, make_context, protocol_config

CLAIM = "Masks reduce transmission of respiratory viruses"
TAU_S, TAU_V = -0.15, 0.7


@pytest.mark.parametrize(
    ("p_stop", "confidence", "stops"),
    [
        (0.60, 0.80, True),  # s = +0.20 >= tau_s, c >= tau_v
        (0.425, 0.70, True),  # both exactly at their thresholds: s = -0.15, c = 0.70
        (0.40, 0.80, False),  # s = -0.20 < tau_s, c fine
        (0.60, 0.69, False),  # s fine, c < tau_v
        (0.40, 0.60, False),  # both short
    ],
)
def test_stop_rule_on_given_probabilities(p_stop: float, confidence: float, stops: bool) -> None:
    stop = LabelDistribution({"STOP": p_stop, "CONTINUE": round(1 - p_stop, 4)}, "logprobs")
    judge = LabelDistribution({"TRUE": confidence, "HALF-TRUE": round(1 - confidence, 4), "FALSE": 0.0}, "logprobs")

    assert should_stop(stop_margin(stop), judge.confidence, TAU_S, TAU_V) is stops


@pytest.mark.parametrize(
    ("s", "c", "stops"), [(-0.15, 0.7, True), (-0.151, 0.7, False), (-0.15, 0.699, False), (1.0, 1.0, True), (-1.0, 1.0, False)]
)
def test_stop_rule_thresholds_are_inclusive(s: float, c: float, stops: bool) -> None:
    assert should_stop(s, c, TAU_S, TAU_V) is stops


def test_strong_evidence_stops_after_the_rebuttal_with_the_round_judges_verdict(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("radar"), services))

    stages = [e.stage for e in events if isinstance(e, StageStarted)]
    assert stages == ["retrieval", "opening", "belief", "stop check", "rebuttal", "belief", "stop check", "explanation"]
    assert sum(isinstance(e, EvidenceRetrieved) for e in events) == 20
    checks = [e for e in events if isinstance(e, StopRuleChecked)]
    assert [(c.phase, c.stop) for c in checks] == [("opening", False), ("rebuttal", True)]
    assert checks[0].verdict_confidence < TAU_V <= checks[1].verdict_confidence
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.label == "TRUE" == checks[1].label
    assert verdict.confidence == checks[1].verdict_confidence
    assert "stopped early after the rebuttal" in verdict.stop_reason
    speakers = [(e.turn.agent, e.turn.round) for e in events if isinstance(e, TurnCompleted)]
    assert speakers == [("Politician", 1), ("Scientist", 1), ("Politician", 2), ("Scientist", 2), ("Judge", 2)]
    assert any(isinstance(e, OmittedContextFound) and e.cited for e in events)


def test_a_strict_confidence_threshold_runs_the_whole_debate(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("radar", tau_v=0.99), services))

    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1, 2, 3]
    assert [c.stop for c in events if isinstance(c, StopRuleChecked)] == [False, False]
    final = [e for e in events if isinstance(e, LabelProbabilitiesEstimated) and e.agent == "Judge"]
    assert len(final) == 1 and final[0].round == 3
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert "after the closing" in verdict.stop_reason and verdict.confidence == max(final[0].probabilities.values())


def test_a_strict_stop_margin_threshold_also_runs_the_whole_debate(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("radar", tau_s=0.95), services))

    assert [c.stop for c in events if isinstance(c, StopRuleChecked)] == [False, False]
    assert isinstance(events[-1], VerdictReached)


def test_without_token_probabilities_it_samples_and_says_so(services: Services) -> None:
    services.chat_override = FakeChatModel(logprobs=False)
    events = list(stream_run(CLAIM, protocol_config("radar", samples=4), services))

    readings = [e for e in events if isinstance(e, LabelProbabilitiesEstimated)]
    assert readings and {r.method for r in readings} == {"sampling"}
    assert all(r.samples == 4 and "no token probabilities" in r.note for r in readings)
    assert isinstance(events[-1], VerdictReached)


def test_early_stop_off_runs_no_stop_checks(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("radar", early_stop=False, explain_verdict=False), services))

    assert not any(isinstance(e, StopRuleChecked) for e in events)
    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1, 2, 3]


async def test_the_checker_can_stop_the_debate_at_the_review(services: Services) -> None:
    reviews: list[int] = []

    async def reviewer(round: int, next_queries: dict[str, str]) -> Review:
        reviews.append(round)
        return Review(stop=True)

    ctx, events = make_context(services, protocol_config("radar", tau_v=0.99), CLAIM, reviewer=reviewer)
    verdict = await run_radar(ctx)  # type: ignore[arg-type]

    assert reviews == [0, 1], "a pause before the first search (whose stop is not taken: nothing is argued yet), then after the opening"
    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1]
    assert "the checker stopped the debate after the opening" in verdict.stop_reason


@pytest.mark.parametrize("protocol", ["radar", "madke"])
async def test_the_checker_rewrites_the_first_search_of_the_shared_pool(services: Services, protocol: str) -> None:
    seen: dict[int, dict[str, str]] = {}

    async def reviewer(round: int, next_queries: dict[str, str]) -> Review:
        seen[round] = dict(next_queries)
        if round == 0:
            (agent,) = next_queries
            return Review(queries={agent: "cloth masks droplets"}, extra_queries=("ventilation and masks",))
        return Review()

    ctx, events = make_context(services, protocol_config(protocol), CLAIM, reviewer=reviewer)
    await (run_radar(ctx) if protocol == "radar" else run_madke(ctx))  # type: ignore[arg-type]

    assert list(seen[0].values()) == [CLAIM], "the pause before the first search shows the claim as the planned query"
    searched = [(e.agent, e.query) for e in events if isinstance(e, QueryIssued) and e.round == 0]
    assert searched[0][1] == "cloth masks droplets" and CLAIM not in [q for _, q in searched], "the rewrite replaces the claim"
    assert ("Human checker", "ventilation and masks") in searched, "the checker's own query is searched too, in their name"
    assert not any(isinstance(e, RoundStarted) for e in events[: next(i for i, e in enumerate(events) if isinstance(e, QueryIssued))])


async def test_struck_evidence_is_kept_from_the_agents(services: Services) -> None:
    log: dict[str, list[object]] = {}
    struck_after: dict[int, set[str]] = {}

    async def reviewer(round: int, next_queries: dict[str, str]) -> Review:
        cited = {c for e in log["events"] if isinstance(e, TurnCompleted) for c in e.turn.cited}
        struck_after[round] = cited
        return Review(struck=dict.fromkeys(cited, "not admissible"))

    ctx, events = make_context(services, protocol_config("radar", tau_v=0.99), CLAIM, reviewer=reviewer)
    log["events"] = events
    await run_radar(ctx)  # type: ignore[arg-type]

    assert struck_after[1], "round 1 cites evidence, so striking it can change what follows"
    for turn in (e.turn for e in events if isinstance(e, TurnCompleted) and e.turn.round >= 2):
        struck_before = set().union(*(ids for r, ids in struck_after.items() if r < turn.round))
        assert not set(turn.cited) & struck_before, (turn.id, turn.cited)


KINDS = ("You are the Politician", "You are the Scientist", "You moderate", "Classify the claim", "Explain the verdict")


async def test_every_call_of_a_debate_opens_with_the_shared_block_and_only_extends_it(services: Services) -> None:
    """The debaters, the stop agent and the judges read the same opening, word for word: the shared evidence, the claim and
    the debate so far, their own instructions after it. So the server's prompt cache reads the evidence once a debate and
    each turn once: each call's opening is the previous call's, or it with the turns spoken since."""
    chat = RecordingChat()
    services.chat_override = chat
    ctx, _ = make_context(services, protocol_config("radar", tau_v=0.99), CLAIM)
    await run_radar(ctx)  # type: ignore[arg-type]

    radar = [(system, user) for system, user in chat.sent if any(kind in user for kind in KINDS)]
    kinds = [next(kind for kind in KINDS if kind in user) for _, user in radar]
    assert [kinds.count(kind) for kind in KINDS] == [3, 3, 2, 3, 1], kinds
    openings = [system.removesuffix(NO_HISTORY) for system, _ in radar]  # before anyone spoke, the history says so
    assert all(system.startswith("Shared evidence:\n[E") for system in openings), "the evidence is every prompt's first lines"
    assert all(later.startswith(earlier) for earlier, later in pairwise(openings)), "the opening only grows"
    assert len(set(openings)) == 4, "the turns of a round are added once it is spoken: 3 rounds, then the ruling"
    evidence = openings[0].split("\n\nClaim:")[0]
    assert evidence.count("\n[E") == 20, "all 20 shared items, the judges' prompts too"
    assert all(CLAIM in system and not any(kind in system for kind in KINDS) for system in openings), "instructions come after"
    asked = [user for (_, user), kind in zip(radar, kinds, strict=True) if kind in ("You moderate", "Classify the claim")]
    assert all(f"\nClaim: {CLAIM}\nStage: " in user for user in asked), "the judges read the claim again right above the options"
