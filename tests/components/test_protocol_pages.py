"""AppTest on the fake backend: each new protocol's panels, and two protocols side by side."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.charts import ConfidencePoint, build_confidence_figure
from components.side_by_side import comparison_frame
from pipelines.run.llm.cache import DiskResponseCache
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.components.conftest import fake_app
from tests.fakes import fake_config, make_services

ROOT = Path(__file__).resolve().parents[2]
CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> AppTest:
    at = fake_app(monkeypatch, demo_data_dir, timeout=180)
    return at


def run_claim(app: AppTest, protocol: str, compare: str = "") -> AppTest:
    app.sidebar.selectbox(key="cfg.protocol").select(protocol).run()
    if compare:
        app.sidebar.selectbox(key="compare_with").select(compare).run()
    app.text_area(key="claim_text").input(CLAIM)
    app.button[0].click().run()
    assert not app.exception
    return app


def text_of(app: AppTest) -> str:
    return " ".join([m.value for m in app.markdown] + [c.value for c in app.caption])


def test_radar_shows_omitted_context_stop_checks_and_the_confidence_plot(app: AppTest) -> None:
    run_claim(app, "radar")

    page = text_of(app)
    assert "Omitted context the Scientist found" in page and "Stop check after the opening" in page
    assert app.get("plotly_chart"), "s and c per round are plotted"
    assert "REFUTED" not in page and "TRUE" in page and "Confidence 0.75" in page, (
        "radar's TRUE shows as SUPPORTED with its own word beside it"
    )
    assert ":green-badge[SUPPORTED]" in page


def test_madke_shows_each_debaters_picks(app: AppTest) -> None:
    run_claim(app, "madke")

    assert "Evidence each debater picked, per turn" in text_of(app)
    picks = next(d.value for d in app.dataframe if "debater" in d.value.columns)
    assert set(picks["debater"]) == {"Debater A", "Debater B"} and "round 1" in picks.columns


def test_mermaid_shows_triplets_and_steps(app: AppTest) -> None:
    run_claim(app, "mermaid")

    page = text_of(app)
    assert "Claim as triplets" in page and "Step 1" in page
    triplets = next(d.value for d in app.dataframe if "relation" in d.value.columns)
    assert list(triplets["relation"]) == ["reduce"]


def test_mad_says_its_debaters_argued_without_evidence(app: AppTest) -> None:
    run_claim(app, "mad")

    page = text_of(app)  # the markdown source: brackets and full stops escaped
    assert "**Why.** Two debaters argued from what the model knows \\(this protocol retrieves no evidence\\)" in page


def queued_runs() -> int:
    """How many runs the queued claim of CLAIM holds, in the app's own store (0 when it is not queued)."""
    from pipelines.core.config import AppSettings
    from pipelines.newsroom.queue import ClaimQueue, QueueFilter
    from pipelines.record.store import RunStore

    queue = ClaimQueue(RunStore(AppSettings().sqlite_url).engine)
    claims = [c for c in queue.find(QueueFilter(text=CLAIM)) if c.text == CLAIM]
    return sum(len(queue.runs_of(c.id)) for c in claims)


def test_two_protocols_side_by_side_and_still_there_after_a_rerun(app: AppTest) -> None:
    before = queued_runs()
    run_claim(app, "radar", compare="mad")
    assert queued_runs() == before + 2, "both runs of a comparison join the claims queue, as a single run does"

    summary = next(d.value for d in app.dataframe if "model calls" in d.value.columns)
    assert list(summary["protocol"]) == ["radar", "mad"]
    assert list(summary["verdict"]) == ["SUPPORTED", "NOT ENOUGH INFO"], "one vocabulary on screen"
    assert list(summary["protocol's word"]) == ["TRUE", "NOT ENOUGH INFO"]
    assert (summary["model calls"] > 0).all() and (summary["tokens in"] > 0).all()
    app.run()
    assert any("model calls" in d.value.columns for d in app.dataframe), "the comparison is replayed"
    assert "Omitted context the Scientist found" in text_of(app)


def test_comparison_frame_reads_verdict_confidence_and_cost(services: Services) -> None:
    runs = [list(stream_run(CLAIM, fake_config(protocol=name), services)) for name in ("radar", "single")]

    frame = comparison_frame(runs)

    assert list(frame["protocol"]) == ["radar", "single"]
    assert frame.loc[0, "confidence"] == pytest.approx(0.75) and frame.loc[1, "verdict"] == "SUPPORTED"
    assert frame.loc[1, "protocol's word"] == "SUPPORTS"
    assert frame.loc[1, "model calls"] == 4 and frame.loc[0, "model calls"] > frame.loc[1, "model calls"]
    assert list(frame["from cache"]) == [0, 0]


def test_comparison_says_when_answers_came_from_the_response_cache(tmp_path: Path, demo_data_dir: Path, embedder: MiniLMEmbedder) -> None:
    services = make_services(demo_data_dir, embedder, cache=True)
    services.response_cache = DiskResponseCache(tmp_path / "responses")  # empty: the first run pays, the second does not
    runs = [list(stream_run(CLAIM, fake_config(protocol="single"), services)) for _ in range(2)]

    frame = comparison_frame(runs)

    assert list(frame["from cache"]) == [0, 4] and list(frame["model calls"]) == [4, 4]  # single: query, answer, the belief in 2 orders
    assert frame.loc[1, "tokens in"] == 0 < frame.loc[0, "tokens in"]


def test_confidence_figure_has_both_series_the_stop_and_both_thresholds() -> None:
    figure = build_confidence_figure(
        [ConfidencePoint(1, "opening", 0.65, 0.5, "TRUE"), ConfidencePoint(2, "rebuttal", 0.75, 0.8, "TRUE", stopped=True)],
        tau_s=-0.15,
        tau_v=0.7,
    )

    assert [trace.name for trace in figure.data] == ["verdict confidence c", "stop margin s", "stopped here"]
    assert {round(shape.y0, 2) for shape in figure.layout.shapes} == {-0.15, 0.7}


def test_the_exhibit_table_escapes_what_a_page_or_a_model_wrote() -> None:
    from components.protocol_panels import exhibit_table_html

    row = {
        "id": "E1<script>",
        "supports": 0.5,
        "contradicts": 0.25,
        "does not address": 0.25,
        "orders agree": "no",
        "points to": "↑ supported",
        "quoted": 'x <img src=x onerror="alert(1)"> & y',
        "source": "<b>Title</b>",
        "url": "",
    }
    html = exhibit_table_html([row])
    assert "<script>" not in html and "<img" not in html and "<b>Title" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; y" in html and "the two orders disagreed" in html
