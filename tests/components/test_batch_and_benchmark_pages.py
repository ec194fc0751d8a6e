"""AppTest drives the Batch and Benchmark pages on the fake backend (web search off, nothing touches the network)."""

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.record.store import RunStore
from pipelines.run.tools.embeddings import Embedder
from tests.components.conftest import fake_app
from tests.fakes import make_services
from tests.stores import POSTGRES_ENV, postgres_database
from tests.workers import drain

ROOT = Path(__file__).resolve().parents[2]


def _app(monkeypatch: pytest.MonkeyPatch, data_dir: Path, page: str, checkcovid_dir: Path | None = None) -> AppTest:
    env = {"checkcovid_dir": str(checkcovid_dir)} if checkcovid_dir is not None else {}
    at = fake_app(monkeypatch, data_dir, timeout=300, **env)
    at.switch_page(page).run()
    assert not at.exception
    return at


def test_batch_page_checks_a_pasted_list_and_offers_both_downloads(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = _app(monkeypatch, demo_data_dir, "pages/batch.py")
    at.text_area(key="batch_paste").input("Masks reduce transmission of respiratory viruses\nVaccines cause autism\n" + "x" * 2100)
    at.button[0].click().run()
    assert not at.exception
    assert any("2 of 3 claims checked; 1 failed" in w.value for w in at.warning)
    assert any("the limit is 2,000" in m.value for m in at.markdown)
    frame = at.dataframe[0].value
    assert len(frame) == 3 and frame["verdict"].iloc[0] == "SUPPORTED" and frame["protocol's word"].iloc[0] == "SUPPORTS"
    assert len(at.get("download_button")) == 2


def test_batch_page_without_claims_says_what_to_do(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = _app(monkeypatch, demo_data_dir, "pages/batch.py")
    at.button[0].click().run()
    assert any("upload a file or paste some claims first" in e.value for e in at.error)


def test_benchmark_page_runs_an_evaluation_and_compares_it(
    monkeypatch: pytest.MonkeyPatch, checkcovid_data_dir: Path, checkcovid_dir: Path
) -> None:
    at = _app(monkeypatch, checkcovid_data_dir, "pages/benchmark.py", checkcovid_dir)
    assert any("fake" in w.value and "not a real model" in w.value for w in at.warning)
    at.number_input[0].set_value(3)
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert len(table) >= 1 and table["claims"].iloc[0] == 3 and 0 <= table["accuracy"].iloc[0] <= 1
    assert len(at.get("plotly_chart")) >= 3  # accuracy and cost, reliability, a confusion matrix
    assert at.multiselect(key="bench_compare").value


OWN_FILE = (
    b'{"claim": "Masks reduce transmission", "label": "SUPPORTS", "id": "c1", "evidence": [{"doc_id": "cord-0001", "sentences": [0]}]}\n'
)


def own_file(at: AppTest) -> AppTest:
    at.selectbox[0].select("upload")  # the form's dataset box
    at.file_uploader[0].set_value(("claims.jsonl", OWN_FILE, "application/json"))
    return at


def test_benchmark_on_your_own_file_asks_for_its_corpus(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = own_file(_app(monkeypatch, demo_data_dir, "pages/benchmark.py"))
    assert at.selectbox[1].value is None  # no corpus is chosen for you (it was check-covid, silently)
    at.button[0].click().run()
    assert not at.exception
    assert any("choose the corpus for your file" in e.value for e in at.error)


def test_benchmark_refuses_a_corpus_without_any_of_the_files_evidence(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = own_file(_app(monkeypatch, demo_data_dir, "pages/benchmark.py"))
    at.selectbox[1].select("demo")
    at.button[0].click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "none of the 1 documents" in errors and "cord" in errors and "demo" in errors
    assert not at.get("progress")  # refused before anything ran (the table below may hold earlier tests' evaluations)


def test_benchmark_on_your_own_file_searches_the_corpus_you_chose(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = _app(monkeypatch, demo_data_dir, "pages/benchmark.py")
    at.selectbox[0].select("upload")
    at.file_uploader[0].set_value(("claims.jsonl", OWN_FILE.replace(b"cord-0001", b"masks-3"), "application/json"))
    at.selectbox[1].select("demo")
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["claims"]) == [1, 1]  # desk and single, each on the one claim, searching demo


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"no PostgreSQL server: set {POSTGRES_ENV} (`.ci/run` starts one)")
def test_batch_page_on_workers_submits_and_another_session_watches_the_store(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder: Embedder
) -> None:
    """The page submits and runs nothing itself; a fresh session (another tab, the app restarted) reads the progress from the store."""
    with postgres_database() as url:
        at = _app(monkeypatch, demo_data_dir, "pages/batch.py")  # a desk on SQLite first: the page runs batches itself
        assert at.button[0].label == "Check all"
        at = fake_app(monkeypatch, demo_data_dir, timeout=300, database_url=url, batch_on_workers="true")
        at.switch_page("pages/batch.py").run()
        assert at.button[0].label == "Submit to the workers"
        at.text_area(key="batch_paste").input("Masks reduce transmission of respiratory viruses\nVaccines cause autism\n<b>The Moon</b>")
        at.button[0].click().run()
        assert not at.exception and not at.error
        frame = at.dataframe[0].value
        assert list(frame["status"]) == ["⏳ waiting"] * 3, "submitted, not run here"
        queue = at.selectbox[0].value
        assert queue.startswith("batch:")
        from pipelines.newsroom.queue import ClaimQueue

        store = RunStore(url)
        claims = ClaimQueue(store.engine)
        joined = {c.text: claims.runs_of(c.id) for c in claims.find()}  # each joins the claims queue as it is submitted
        assert set(joined) == {"Masks reduce transmission of respiratory viruses", "Vaccines cause autism", "<b>The Moon</b>"}
        assert all(len(runs) == 1 for runs in joined.values())
        store.engine.dispose()

        services = make_services(demo_data_dir, embedder)
        services.store = RunStore(url)
        drain(services, queue)  # a worker (here in this process; tests/pipelines/run/test_workers.py starts real ones)
        services.store.engine.dispose()

        later = fake_app(monkeypatch, demo_data_dir, timeout=300, database_url=url, batch_on_workers="true")
        later.switch_page("pages/batch.py").run()
        assert not later.exception
        frame = later.dataframe[0].value
        assert list(frame["status"]) == ["✅ completed"] * 3 and frame["claim"].iloc[2] == "<b>The Moon</b>"
        assert all(w for w in frame["worker"]), "by which worker"
        assert any("3 of 3 completed" in s.value for s in later.success)
