"""`madke` on the fake backend: one pool before the debate, picks per turn, the agreement judge, the summarizer."""

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
from pipelines.run.llm import fake
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import CannedWeb, protocol_config

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
