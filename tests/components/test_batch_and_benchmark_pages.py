"""AppTest drives the Batch and Benchmark pages on the fake backend (web search off, nothing touches the network)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import fake_app

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
    assert len(frame) == 3 and frame["verdict"].iloc[0] == "SUPPORTS"
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
