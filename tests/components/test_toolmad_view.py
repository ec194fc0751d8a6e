"""The Verify page on a `toolmad` debate (AppTest, fake backend, web off), and hostile text rendered as text."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import fake_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> AppTest:
    monkeypatch.setenv("DEBATEDESK_PROTOCOL", "toolmad")  # desk is the default; these tests are about toolmad's page
    at = fake_app(monkeypatch, demo_data_dir, timeout=180)
    return at


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_a_judged_toolmad_debate_shows_rounds_scores_statements_and_why(app: AppTest) -> None:
    assert app.sidebar.selectbox[0].value == "toolmad"
    app.text_area(key="claim_text").input("Quantum chromodynamics explains stock prices")
    app.button[0].click().run()
    assert not app.exception
    assert [h.value for h in app.subheader] == ["Round 1", "Round 2", "Round 3", "Ruling"]
    shown = texts(app)
    assert shown.count(":red-badge[F 0.00 < 0.70]") == 6, "an F badge under each of the six answers"
    assert shown.count("-badge[AR ") == 6
    assert "❌ unsupported" in shown
    assert "web unavailable: corpus search instead" in shown
    assert "Decided by judge" in shown and "no consensus after 3 round\\(s\\)" in shown
    assert app.dataframe, "the evidence panel"


def test_an_agreed_debate_stops_after_round_one_with_passing_badges(app: AppTest) -> None:
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    assert [h.value for h in app.subheader] == ["Round 1"]
    shown = texts(app)
    assert ":green-badge[F 1.00 ≥ 0.70]" in shown and ":green-badge[AR 0." in shown
    assert "✅ supported by E" in shown
    marked = [m.value for m in app.markdown if ":green-badge[✓ E" in m.value]
    assert len(marked) == 2, "each answer's text carries its statements' marks, where they stand"
    assert all(re.search(r"bias\\\. \\\[E1\\\] :green-badge\[✓ E1\]", m) for m in marked), "the mark follows the sentence it checks"
    assert "Faithfulness, marked in the text: 3 of 3 statements rest on an exhibit" in shown
    assert "Decided by consensus" in shown and "consensus in round 1" in shown
    frame = app.dataframe[0].value
    assert "statements" in frame.columns and frame["statements"].str.len().max() > 0, "the panel lists which statements cite each item"


def render_hostile_run() -> None:
    """Replays a run whose web page, model answer and scorer output all carry markup."""
    from components.transcript import replay
    from pipelines.core.domain import Evidence, Turn, Verdict
    from pipelines.core.events import (
        EvidenceRetrieved,
        ModelServerRestarted,
        QueryIssued,
        RoundStarted,
        RunStarted,
        ScoreComputed,
        StageFailed,
        StatementChecked,
        TurnCompleted,
        VerdictReached,
        WebSearchUnavailable,
    )

    bad = "<script>alert(1)</script> ![px](http://evil.test/p.png) [click](http://evil.test) :red[FAKE]"
    events = [
        RunStarted(run_id="x", claim="c", protocol="toolmad"),
        RoundStarted(round=1),
        QueryIssued(agent="Search", round=1, query=bad, tool="web"),
        WebSearchUnavailable(reason=bad, fallback="corpus search", agent="Search", round=1),
        EvidenceRetrieved(
            agent="Search", round=1, evidence=Evidence(id="E1", source="web", text=bad, title=bad, url="javascript:alert(1)")
        ),
        TurnCompleted(turn=Turn(id="Search-r1", agent="Search", round=1, text=bad + "\nLabel: SUPPORTS", label="SUPPORTS", cited=("E1",))),
        StatementChecked(turn_id="Search-r1", statement=bad, supported=True, evidence_id="E1"),
        ScoreComputed(target="Search-r1", metric="F", value=1.0, threshold=0.7, detail=bad),
        StageFailed(stage="RAG round 1 answer", reason=bad),
        ModelServerRestarted(role="debater", reason=bad, seconds=14.2),
        VerdictReached(verdict=Verdict(label="SUPPORTS", rationale=bad, decided_by="judge", stop_reason=bad)),
    ]
    replay(events)


def test_text_from_pages_models_and_scorers_is_shown_as_text() -> None:
    at = AppTest.from_function(render_hostile_run, default_timeout=60)
    at.run()
    assert not at.exception
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning]
    joined = "\n".join(rendered)
    assert "evil" in joined, "the hostile text is there, as text"
    assert any("started again in 14 s" in w.value for w in at.warning), "a model server started again mid-run is told plainly"
    for element in rendered:
        assert "<script>" not in element and "](http" not in element and "![" not in element and ":red[" not in element


def render_turn_with_rewrites() -> None:
    """A debater's round-1 search for the claim, then the claim's two rewrites (retrieval.rewrites), then its answer."""
    from components.transcript import replay
    from pipelines.core.domain import Turn
    from pipelines.core.events import QueryIssued, RoundStarted, RunStarted, TurnCompleted

    replay(
        [
            RunStarted(run_id="x", claim="Masks reduce transmission", protocol="toolmad"),
            RoundStarted(round=1),
            QueryIssued(agent="RAG", round=1, query="masks transmission", tool="corpus"),
            QueryIssued(agent="RAG", round=1, query="face covering efficacy", tool="corpus", rewritten=True),
            QueryIssued(agent="RAG", round=1, query="surgical mask trial", tool="corpus", rewritten=True),
            QueryIssued(agent="Search", round=1, query="masks transmission", tool="web"),
            TurnCompleted(turn=Turn(id="RAG-r1", agent="RAG", round=1, text="An answer.\nLabel: SUPPORTS", label="SUPPORTS")),
            TurnCompleted(turn=Turn(id="Search-r1", agent="Search", round=1, text="Another.\nLabel: SUPPORTS", label="SUPPORTS")),
        ]
    )


def test_a_turn_header_names_every_query_the_agent_searched() -> None:
    at = AppTest.from_function(render_turn_with_rewrites, default_timeout=60)
    at.run()
    assert not at.exception
    headers = [m.value for m in at.markdown if m.value.startswith("**")]
    rag = next(h for h in headers if h.startswith("**RAG**"))
    assert "query: “masks transmission” · also searched: “face covering efficacy”; “surgical mask trial”" in rag
    search = next(h for h in headers if h.startswith("**Search**"))
    assert "also searched" not in search


def render_an_echoed_turn() -> None:
    """Round 2: RAG writes Search's round-1 answer again, a word changed; Search answers in its own words."""
    from components.transcript import replay
    from pipelines.core.domain import Turn
    from pipelines.core.events import RoundStarted, RunStarted, TurnCompleted

    search = "The evidence shows adults aged 25-44 die at higher rates than children, so the claim fails.\nLabel: REFUTES"
    rag = "Children are the least likely to die of it [E14]; the claim is wrong.\nLabel: REFUTES"
    replay(
        [
            RunStarted(run_id="x", claim="Children have the highest COVID-19 mortality", protocol="toolmad"),
            RoundStarted(round=1),
            TurnCompleted(turn=Turn(id="RAG-r1", agent="RAG", round=1, text=rag, label="REFUTES")),
            TurnCompleted(turn=Turn(id="Search-r1", agent="Search", round=1, text=search, label="REFUTES")),
            RoundStarted(round=2),
            TurnCompleted(turn=Turn(id="RAG-r2", agent="RAG", round=2, text=search.replace("shows", "says"), label="REFUTES")),
            TurnCompleted(turn=Turn(id="Search-r2", agent="Search", round=2, text="I agree with RAG: [E14] settles it.\nLabel: REFUTES")),
        ]
    )


def test_a_turn_that_repeats_the_opponent_says_so_under_it() -> None:
    at = AppTest.from_function(render_an_echoed_turn, default_timeout=60)
    at.run()
    assert not at.exception
    notes = [m.value for m in at.markdown if "🔁" in m.value]
    assert notes == [
        ":orange-badge[🔁 Search's round 1 again] nearly word for word: "
        "the model repeated its opponent here instead of arguing from its own evidence."
    ], "RAG's round-2 copy is marked; Search's own answer and round 1 are not"
