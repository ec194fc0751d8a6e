"""Retrieval on the real page: the evidence table's scores and positions (the settings themselves: test_settings_page.py)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.evidence_table import evidence_frame, position_label
from pipelines.core.domain import Evidence

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> AppTest:
    for role in ("DEBATER", "JUDGE", "SCORER"):
        monkeypatch.setenv(f"DEBATEDESK_{role}__BACKEND", "fake")
    monkeypatch.setenv("DEBATEDESK_RETRIEVAL__WEB_SEARCH", "false")
    monkeypatch.setenv("DEBATEDESK_PROTOCOL", "single")  # one evidence table, the first on the page
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(demo_data_dir))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    return at


def test_the_evidence_table_shows_every_score_and_the_passage_position(app: AppTest) -> None:
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    assert not app.exception
    frame = app.dataframe[0].value
    assert {"dense", "lexical", "fused", "position"} <= set(frame.columns)
    assert frame["fused"].notna().all() and frame["position"].str.startswith("passage ").all()


def test_position_labels_count_from_one() -> None:
    e = Evidence(id="E1", source="corpus", text="t", passage_index=1, sentence_indices=(2, 3, 4))
    assert position_label(e) == "passage 2 · sentences 3-5"
    assert position_label(e.model_copy(update={"sentence_indices": (0,)})) == "passage 2 · sentence 1"
    assert position_label(Evidence(id="E2", source="web", text="t")) == ""
    assert evidence_frame([e])["position"].tolist() == ["passage 2 · sentences 3-5"]
