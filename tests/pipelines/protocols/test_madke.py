"""`madke` on the fake backend: one pool before the debate, picks per turn, the agreement judge, the summarizer."""

from itertools import pairwise

import pytest

from pipelines.core.events import (
    AgreementChecked,
    EvidenceRetrieved,
    EvidenceSelected,
    QueryIssued,
    RoundStarted,
    StageStarted,
    TurnCompleted,
    WebSearchUnavailable,
)
from pipelines.protocols.madke.run import run_madke
from pipelines.run.llm import fake
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.stages.debate_history import NO_HISTORY
from tests.fakes import CannedWeb, RecordingChat, make_context, protocol_config

CLAIM = "Masks reduce transmission of respiratory viruses"


def test_pool_first_then_picks_then_agreement_stops_and_the_summarizer_rules(services: Services) -> None:
    events = list(stream_run(CLAIM, protocol_config("madke"), services))

    kinds = [type(e) for e in events]
    assert max(i for i, k in enumerate(kinds) if k is QueryIssued) < kinds.index(RoundStarted), "retrieval happens once, before the debate"
    assert any(isinstance(e, WebSearchUnavailable) for e in events), "offline web is reported and the debate goes on"
    pool = {e.evidence.id for e in events if isinstance(e, EvidenceRetrieved)}
    assert len(pool) == 10
    picks = [e for e in events if isinstance(e, EvidenceSelected)]
    assert {(p.agent, p.round) for p in picks} == {("Debater A", 1), ("Debater B", 1)}
    assert all(0 < len(p.evidence_ids) <= 3 and set(p.evidence_ids) <= pool for p in picks)
    checks = [e for e in events if isinstance(e, AgreementChecked)]
    assert [(c.round, c.agree, c.consistent) for c in checks] == [(1, True, True)]
    assert [e.stage for e in events if isinstance(e, StageStarted)][-1] == "summary"
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.decided_by == "summarizer" and verdict.label == "SUPPORTS"
    assert "agreement" in verdict.stop_reason


def test_web_results_join_the_pool(services: Services) -> None:
    services.web = CannedWeb()
    events = list(stream_run(CLAIM, protocol_config("madke"), services))

    sources = [e.evidence.source for e in events if isinstance(e, EvidenceRetrieved)]
    assert sources.count("corpus") == 10 and sources.count("web") == 2


def test_without_agreement_the_debate_runs_every_round(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(fake.RESPONDERS, "AgreementCheck", lambda view, schema: {"agree": False, "consistent": True, "reason": "no"})
    events = list(stream_run(CLAIM, protocol_config("madke", max_rounds=3, max_picks=2), services))

    assert [e.round for e in events if isinstance(e, RoundStarted)] == [1, 2, 3]
    picks = [e for e in events if isinstance(e, EvidenceSelected)]
    assert len(picks) == 6 and all(len(p.evidence_ids) <= 2 for p in picks)
    assert "no agreement after 3 rounds" in events[-1].verdict.stop_reason  # type: ignore[attr-defined]
    assert [e.turn.agent for e in events if isinstance(e, TurnCompleted)][-1] == "Summarizer"


def test_a_debater_may_find_nothing_useful(services: Services) -> None:
    events = list(stream_run("Quantum chromodynamics explains stock prices", protocol_config("madke"), services))

    picks = [e for e in events if isinstance(e, EvidenceSelected)]
    assert picks and all(p.none_found and not p.evidence_ids for p in picks)
    assert events[-1].verdict.label == "NOT ENOUGH INFO"  # type: ignore[attr-defined]


KINDS = (
    "Before you argue, pick",
    "one of two debaters checking",
    "You check the fact-checking debate",
    "You summarise the fact-checking debate",
)


async def test_every_call_of_a_debate_opens_with_the_shared_block_and_only_extends_it(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The debaters' picks and answers, the agreement judge and the summarizer read the same opening, word for word: the
    pool, the claim and the debate so far, their own instructions after it. So the server's prompt cache reads the pool
    once a debate and each turn once: each call's opening is the previous call's, or it with the turns spoken since."""
    monkeypatch.setitem(fake.RESPONDERS, "AgreementCheck", lambda view, schema: {"agree": False, "consistent": True, "reason": "no"})
    chat = RecordingChat()
    services.chat_override = chat
    ctx, events = make_context(services, protocol_config("madke", max_rounds=3), CLAIM)
    verdict = await run_madke(ctx)  # type: ignore[arg-type]

    madke = [(system, user) for system, user in chat.sent if any(kind in user for kind in KINDS)]
    kinds = [next(kind for kind in KINDS if kind in user) for _, user in madke]
    assert [kinds.count(kind) for kind in KINDS] == [6, 6, 3, 1], kinds
    openings = [system.removesuffix(NO_HISTORY) for system, _ in madke]  # before anyone spoke, the history says so
    assert all(system.startswith("Shared evidence pool:\n[E") for system in openings), "the pool is every prompt's first lines"
    assert all(later.startswith(earlier) for earlier, later in pairwise(openings)), "the opening only grows"
    assert len(set(openings)) == 4, "a round's turns are added once it is spoken: 3 rounds, then the summary"
    assert openings[0].split("\n\nClaim:")[0].count("\n[E") == 10, "the whole pool, the judge's and the summarizer's prompts too"
    assert all(CLAIM in system and not any(kind in system for kind in KINDS) for system in openings), "instructions come after"
    assert all(f"Claim: {CLAIM}" in user for _, user in madke), "each call reads the claim again by its question"
    picks = [e for e in events if isinstance(e, EvidenceSelected)]
    answers = [user for (_, user), kind in zip(madke, kinds, strict=True) if kind == KINDS[1]]
    assert all(f"You picked {', '.join(p.evidence_ids)} from the pool above" in user for p, user in zip(picks, answers, strict=True))
    assert verdict.decided_by == "summarizer"
