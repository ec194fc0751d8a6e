"""`mad` on the fake backend: two debaters, three rounds, no retrieval, a judge."""

from pipelines.core.events import EvidenceRetrieved, QueryIssued, RoundStarted, TurnCompleted
from pipelines.protocols.mad.run import run_mad
from pipelines.run.context import Review
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import make_context, protocol_config

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_three_rounds_of_two_debaters_then_the_judge_and_no_retrieval(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("mad"), services))

    assert not any(isinstance(e, (QueryIssued, EvidenceRetrieved)) for e in events)
    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1, 2, 3]
    turns = [(e.turn.agent, e.turn.round) for e in events if isinstance(e, TurnCompleted)]
    assert sorted(turns[:6]) == [(agent, r) for agent in ("Debater A", "Debater B") for r in (1, 2, 3)]
    assert turns[-1] == ("Judge", 0)  # the ruling, after the rounds (it was drawn as a "round 4")
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.decided_by == "judge" and verdict.label == "NOT ENOUGH INFO"  # the fake knows nothing without evidence
    assert "after 3 rounds" in verdict.stop_reason


def test_stop_on_agreement_ends_after_the_first_agreeing_round(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("mad", stop_on_agreement=True), services))

    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1]
    assert "agreed in round 1" in events[-1].verdict.stop_reason  # type: ignore[attr-defined]


async def test_the_review_hook_runs_after_each_round_and_can_stop(services: Services) -> None:
    rounds: list[int] = []

    async def reviewer(round: int, next_queries: dict[str, str]) -> Review:
        rounds.append(round)
        return Review(stop=round == 2)

    ctx, _ = make_context(services, protocol_config("mad"), CLAIM, reviewer=reviewer)
    verdict = await run_mad(ctx)  # type: ignore[arg-type]

    assert rounds == [1, 2]
    assert "checker stopped the debate after round 2" in verdict.stop_reason
