"""The courtroom audit builders: tables and plotly figures from a run's events, without Streamlit."""

from __future__ import annotations

from pathlib import Path

import pytest

from components import proclaim_charts as charts
from pipelines.core.domain import Vote
from pipelines.core.events import (
    AdmissibilityAssessed,
    ConfidenceComputed,
    Event,
    EvidenceRetrieved,
    NoveltyAssessed,
    ReflectionScored,
    StageFailed,
    VoteCast,
)
from pipelines.protocols.proclaim.record import CourtRecord
from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.fakes import fake_config, make_services

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture(scope="module")
def run_events(demo_data_dir: Path, embedder: MiniLMEmbedder) -> tuple[list[Event], list[Event]]:
    """A finished fake proclaim run: the live events and the same run read back from the store."""
    from pipelines.run.runner import stream_run

    services = make_services(demo_data_dir, embedder)
    config = fake_config(protocol="proclaim")
    live = list(stream_run(CLAIM, config, services))
    assert services.store is not None
    return live, services.store.events(live[0].run_id)  # type: ignore[attr-defined]


def confidence(**terms: float | bool) -> ConfidenceComputed:
    base: dict = {
        "label": "SUPPORTED",
        "votes": {"SUPPORTED": 2, "NOT SUPPORTED": 1, "INCONCLUSIVE": 0},
        "winning_votes": 2,
        "total_votes": 3,
        "vote_share_term": 0.5333,
        "quality_sum": 15.0,
        "quality_term": 0.15,
        "c_base": 0.6833,
        "delta_rs": -0.05,
        "s_ref": 0.3,
        "delta_ref": -0.12,
        "unclamped": 0.5133,
        "floor_applied": False,
        "c_final": 0.5133,
    }
    return ConfidenceComputed(**{**base, **terms})


def test_a_stored_run_gives_the_same_record_as_the_live_one(run_events: tuple[list[Event], list[Event]]) -> None:
    live, stored = (CourtRecord.from_events(events) for events in run_events)
    assert live.is_courtroom and live.confidence == stored.confidence and live.verdict == stored.verdict
    assert charts.exhibit_frame(live).equals(charts.exhibit_frame(stored))


def test_the_exhibit_table_has_every_exhibit_with_its_ruling(run_events: tuple[list[Event], list[Event]]) -> None:
    events = run_events[0]
    frame = charts.exhibit_frame(CourtRecord.from_events(events))
    retrieved = {e.evidence.id for e in events if isinstance(e, EvidenceRetrieved)}
    assert set(frame["id"]) == retrieved
    for ruling in (e for e in events if isinstance(e, AdmissibilityAssessed)):
        row = frame[frame["id"] == ruling.evidence_id].iloc[0]
        assert row["status"] == ruling.admissibility.status and row["w"] == pytest.approx(ruling.admissibility.weight)
        assert row["reason"] == ruling.admissibility.reason
    for novelty in (e for e in events if isinstance(e, NoveltyAssessed) and not e.joined):
        assert frame[frame["id"] == novelty.evidence_id].iloc[0]["status"] in ("redundant", "admitted", "disputed", "discarded")
    assert (frame["cited in"] != "").any(), "where each exhibit was cited"
    # Hybrid search returns each document once: on the small demo corpus Defense's queries find documents already in the pool.
    assert set(frame["found by"]) >= {"Premise 1", "Plaintiff"}


def test_filters_narrow_the_table(run_events: tuple[list[Event], list[Event]]) -> None:
    frame = charts.exhibit_frame(CourtRecord.from_events(run_events[0]))
    admitted = charts.filter_exhibits(frame, statuses=["admitted"])
    assert len(admitted) and set(admitted["status"]) == {"admitted"}
    assert set(charts.filter_exhibits(frame, found_by=["Plaintiff"])["found by"]) == {"Plaintiff"}
    assert charts.filter_exhibits(frame, text="no such words anywhere").empty
    assert (charts.filter_exhibits(frame, cited_only=True)["cited in"] != "").all()
    assert len(charts.filter_exhibits(frame)) == len(frame)


def test_scatter_plots_each_ruled_exhibit_by_status_with_threshold_curves(run_events: tuple[list[Event], list[Event]]) -> None:
    record = CourtRecord.from_events(run_events[0])
    fig = charts.build_admissibility_scatter(record)
    points = {t.name: [i for label in t.text for i in label.split(", ")] for t in fig.data if t.mode == "markers+text"}
    ruled = {x.evidence.id: x for x in record.exhibits.values() if x.admissibility}
    assert sorted(i for ids in points.values() for i in ids) == sorted(ruled)
    assert all(ruled[i].status == status for status, ids in points.items() for i in ids)
    for trace in (t for t in fig.data if t.mode == "markers+text"):  # each marker sits at its exhibits' r and c
        for x, y, label in zip(trace.x, trace.y, trace.text, strict=True):
            assert all(ruled[i].admissibility.relevance == x and ruled[i].admissibility.credibility == y for i in label.split(", "))  # type: ignore[union-attr]
    curves = [t for t in fig.data if t.mode == "lines"]
    assert len(curves) == 2 and all(
        abs(x * y - w) < 1e-9 for t, w in zip(curves, (0.5, 0.1), strict=True) for x, y in zip(t.x, t.y, strict=True)
    )


def test_vote_chart_counts_votes_and_names_failed_judges() -> None:
    events: list[Event] = [
        VoteCast(vote=Vote(judge="Judge 1", label="SUPPORTED", model="fake")),
        VoteCast(vote=Vote(judge="Judge 3", label="NOT SUPPORTED", model="fake")),
        StageFailed(stage="panel: Judge 2", reason="no valid PanelJudgment"),
    ]
    record = CourtRecord.from_events(events)
    fig = charts.build_vote_chart(record)
    assert list(fig.data[0].y) == [1, 1, 0] and list(fig.data[0].text) == ["Judge 1", "Judge 3", ""]
    assert "1 judge failed" in fig.layout.title.text
    assert [f.stage for f in record.failed_judges] == ["panel: Judge 2"]


@pytest.mark.parametrize(
    ("terms", "extra"),
    [
        ({}, []),
        (
            {"vote_share_term": 0.8, "quality_term": 0.24, "delta_rs": 0.1, "delta_ref": 0.12, "unclamped": 1.26, "c_final": 1.0},
            ["clamp to [0, 1]"],
        ),
        (
            {
                "vote_share_term": 0.0667,
                "quality_term": 0.0,
                "delta_rs": -0.05,
                "delta_ref": -0.15,
                "unclamped": -0.1333,
                "floor_applied": True,
                "c_final": 0.1,
            },
            ["clamp to [0, 1]", "floor"],
        ),
    ],
)
def test_confidence_bar_stacks_terms_that_add_up_to_c_final(terms: dict, extra: list[str]) -> None:
    record = CourtRecord.from_events([confidence(**terms)])
    parts = charts.confidence_terms(record)
    assert [name for name, _ in parts][4:] == extra
    assert sum(value for _, value in parts) == pytest.approx(record.confidence.c_final, abs=1e-9)  # type: ignore[union-attr]
    waterfall = charts.build_confidence_chart(record).data[0]
    assert list(waterfall.measure) == ["relative"] * len(parts) + ["total"]
    assert sum(waterfall.y[:-1]) == pytest.approx(waterfall.y[-1]) and waterfall.y[-1] == record.confidence.c_final  # type: ignore[union-attr]


def test_rounds_chart_plots_s_ref_pool_and_novelty(run_events: tuple[list[Event], list[Event]]) -> None:
    events = run_events[0]
    record = CourtRecord.from_events(events)
    fig = charts.build_rounds_chart(record)
    traces = {t.name: t for t in fig.data}
    plaintiff = [e.s_ref for e in events if isinstance(e, ReflectionScored) and e.agent == "Plaintiff"]
    assert list(traces["s_ref: Plaintiff"].y) == pytest.approx(plaintiff)
    assert traces["pool size"].x[0] == 0 and len(traces["mean novelty"].y) == len(plaintiff)
    assert any("stopped:" in a.text for a in fig.layout.annotations)


def test_premise_and_judge_tables(run_events: tuple[list[Event], list[Event]]) -> None:
    record = CourtRecord.from_events(run_events[0])
    premises = charts.premise_frame(record)
    assert list(premises["premise"]) == [f"P1. {CLAIM}"] and premises["addressed"].iloc[0]
    judges = charts.judge_frame(record)
    assert list(judges["judge"]) == ["Judge 1", "Judge 2", "Judge 3"] and {"evidence_strength", "mean quality", "vote"} <= set(
        judges.columns
    )


def test_a_run_that_is_not_a_courtroom_run_is_recognised() -> None:
    assert not CourtRecord.from_events([VoteCast(vote=Vote(judge="J", label="SUPPORTS"))]).is_courtroom
