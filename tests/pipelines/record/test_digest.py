"""The digest reads a run's events once: the same answer fed live or from storage, one Cost, the checker's doings."""

from __future__ import annotations

import pytest

from pipelines.core import events as ev
from pipelines.core.domain import Evidence, Turn, Verdict
from pipelines.record.digest import Cost, RunDigest, describe_intervention, digest, stage_name
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config


def _call(role: str, tokens: int, seconds: float, at: float, cached: bool = False) -> ev.ModelCallCompleted:
    return ev.ModelCallCompleted(role=role, model="m", tokens_in=tokens, tokens_out=tokens // 10, seconds=seconds, cached=cached, at=at)


def _evidence(eid: str) -> ev.EvidenceRetrieved:
    return ev.EvidenceRetrieved(agent="A", round=1, evidence=Evidence(id=eid, source="corpus", text=f"text {eid}"), at=2.0)


EVENTS: list[ev.Event] = [
    ev.RunStarted(run_id="r1", claim="c", protocol="mad", at=1.0),
    ev.StageStarted(stage="round 1: arguments", at=1.5),
    ev.QueryIssued(agent="A", round=1, query="q", tool="corpus", at=1.6),
    _evidence("E1"),
    _evidence("E2"),
    _call("debater", 100, 1.0, at=3.0),
    ev.TurnCompleted(turn=Turn(id="t1", agent="A", round=1, text="x", cited=("E1",)), at=3.1),
    ev.StatementChecked(turn_id="t1", statement="see [E2]", supported=True, evidence_id="E1", at=3.2),
    ev.StageCompleted(stage="round 1: arguments", at=3.3),
    ev.CheckerStruckEvidence(round=1, evidence_id="E1", reason="off topic", by="ann", at=3.4),
    ev.CheckerStruckEvidence(round=1, evidence_id="E2", reason="old", by="ann", at=3.5),
    ev.CheckerAdmittedEvidence(round=1, evidence_id="E2", reason="still valid", by="ann", at=3.6),
    ev.RunFailed(reason="boom", at=4.0),
    ev.RunResumed(attempt=2, replayed=12, at=5.0),
    _call("judge", 50, 0.0, at=6.0, cached=True),
    ev.VerdictReached(verdict=Verdict(label="SUPPORTS", confidence=0.8, cited=("E2", "E9")), at=7.0),
    ev.VerdictOverridden(label="REFUTES", by="ann", at=9.0),
]


def test_a_run_is_read_into_verdict_evidence_interventions_and_one_cost() -> None:
    run = digest(EVENTS)
    assert (run.run_id, run.claim, run.protocol, run.queries, run.events) == ("r1", "c", "mad", 1, len(EVENTS))
    assert run.verdict is not None and run.verdict.label == "SUPPORTS" and run.final_label == "REFUTES"
    assert list(run.evidence) == ["E1", "E2"] and [e.id for e in run.cited_evidence()] == ["E2"]
    assert run.cited_by == {"E1": ["t1"]}
    assert run.statements == {"E1": ["t1: see [E2]"], "E2": ["t1 (unsupported): see [E2]"]}
    assert run.struck == {"E1": "off topic"} and run.admitted == {"E2": "still valid"}
    assert [type(e).__name__ for e in run.interventions] == [
        "CheckerStruckEvidence", "CheckerStruckEvidence", "CheckerAdmittedEvidence", "VerdictOverridden",
    ]  # fmt: skip
    assert run.failure is None, "a run that resumed is no longer failed"
    # Wall time runs to the verdict (7.0), not to the checker's override two seconds later: that is not the run's time.
    assert run.cost == Cost(calls=2, cached_calls=1, tokens_in=150, tokens_out=15, model_seconds=1.0, wall_seconds=6.0)
    assert run.by_stage == {
        "rounds: arguments": Cost(calls=1, tokens_in=100, tokens_out=10, model_seconds=1.0),
        "(no stage: judge calls)": Cost(calls=1, cached_calls=1, tokens_in=50, tokens_out=5),
    }
    assert Cost.total(run.by_stage.values()) == run.cost.model_copy(update={"wall_seconds": 0.0})


def test_fed_live_it_gives_what_the_stored_run_gives(services: Services) -> None:
    live = RunDigest()
    events = []
    for evt in stream_run("Masks reduce transmission of respiratory viruses", fake_config(protocol="single"), services):
        live.feed(evt)
        events.append(evt)
    stored = digest(events)
    assert live.cost == stored.cost and live.cost.calls == 4 and live.cost.tokens_in > 0
    assert live.verdict == stored.verdict is not None and live.evidence == stored.evidence


@pytest.mark.parametrize(
    ("stage", "name"),
    [("round 3: arguments", "rounds: arguments"), ("RAG round 2 query", "RAG query"), ("judge", "judge")],
)
def test_stages_of_every_round_count_together(stage: str, name: str) -> None:
    assert stage_name(stage) == name


def test_cost_describes_itself_in_numbers_only() -> None:
    assert Cost(calls=3, tokens_in=1234, tokens_out=56, model_seconds=2.25).describe() == (
        "3 model calls · 1,234 tokens in · 56 out · 2.2 s of model time"
    )


def test_an_intervention_is_described_once_with_every_quoted_string_passed_through_the_sinks_escaper() -> None:
    struck = ev.CheckerStruckEvidence(round=2, evidence_id="E1", reason="[click](http://evil.test)", by="ann")
    quoted: list[tuple[str, int]] = []

    def quote(text: str, limit: int) -> str:
        quoted.append((text, limit))
        return "<" + text[:limit] + ">"

    assert describe_intervention(struck, quote) == "round 2: struck <E1> (<[click](http://evil.test)>)"
    assert quoted == [("E1", 40), ("[click](http://evil.test)", 300)]
    assert describe_intervention(ev.RunFailed(reason="x"), quote) == ""
