"""AppTest: the Verify page shows the court record under a `proclaim` run, and only then."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def verify_page(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, protocol: str) -> AppTest:
    for role in ("DEBATER", "JUDGE", "SCORER"):
        monkeypatch.setenv(f"DEBATEDESK_{role}__BACKEND", "fake")
    monkeypatch.setenv("DEBATEDESK_RETRIEVAL__WEB_SEARCH", "false")
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(demo_data_dir))
    monkeypatch.setenv("DEBATEDESK_PROTOCOL", protocol)
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    at.button[0].click().run()
    assert not at.exception
    return at


def test_a_proclaim_run_shows_the_court_record_and_keeps_it_after_a_rerun(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = verify_page(monkeypatch, demo_data_dir, "proclaim")
    labels = [t.label for t in at.tabs]
    assert labels == ["🧾 Evidence inspector", "⚖️ Panel", "📈 Rounds", "✅ Premises"]
    text = " ".join(m.value for m in at.markdown)
    assert "Judge 1" in text and "c_final" in text and "addressed" in text
    assert any("Stopped after round" in i.value for i in at.info)
    at.multiselect(key="audit.verify.status").select("admitted").run()  # a filter change reruns the page from the stored events
    assert not at.exception and [t.label for t in at.tabs] == labels
    assert any("exhibits. Click a column header" in c.value for c in at.caption)


def test_other_protocols_show_no_court_record(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    at = verify_page(monkeypatch, demo_data_dir, "single")
    assert not at.tabs and "Court record" not in " ".join(h.value for h in at.subheader)
