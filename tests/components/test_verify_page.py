"""AppTest drives the real pages on the fake backend, with web search off (tests never touch the network)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import fake_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> AppTest:
    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    return at


def test_verify_page_runs_a_claim_and_shows_the_verdict(app: AppTest) -> None:
    assert not app.exception
    assert any("fake" in w.value and "not a real model" in w.value for w in app.sidebar.warning)
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    assert not app.exception
    markdown = " ".join(m.value for m in app.markdown)
    assert "Verdict" in markdown and "SUPPORTS" in markdown
    assert app.dataframe, "the evidence table is shown"


def test_empty_claim_gets_a_clear_message(app: AppTest) -> None:
    app.button[0].click().run()
    assert not app.exception
    assert any("the claim is empty" in e.value for e in app.error)


def test_huge_claim_gets_a_clear_message(app: AppTest) -> None:
    app.text_area(key="claim_text").input("masks " * 20_000)
    app.button[0].click().run()
    assert any("the limit is 2,000" in e.value for e in app.error)


def test_a_finished_run_stays_on_screen_after_a_rerun(app: AppTest) -> None:
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    app.run()
    assert "Verdict" in " ".join(m.value for m in app.markdown)


def test_a_first_start_indexes_the_demo_corpus_on_the_page_and_says_what_the_app_is_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fresh data folder: the claim box is drawn before the heavy objects are built, the demo corpus is indexed on the
    first page load (a progress bar while it goes), and the landing text says in three lines what the app does."""
    at = fake_app(monkeypatch, tmp_path / "fresh", timeout=300)
    assert not at.exception
    assert at.text_area(key="claim_text") is not None
    assert (tmp_path / "fresh" / "indexed" / "demo.count").is_file(), "the demo corpus was indexed on the first load"
    landing = " ".join(m.value for m in at.markdown)
    assert "checks a claim against evidence" in landing and "Verify" in landing and "History" in landing
    at.run()  # a second load finds the corpus ready and shows no bar
    assert not at.exception and not at.get("progress")


def test_the_protocol_s_caption_says_how_long_a_claim_took_here_once_a_run_has(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path
) -> None:
    app = fake_app(monkeypatch, demo_data_dir, timeout=120, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")  # no run yet

    def took() -> list[str]:
        return [c.value for c in app.sidebar.caption if "claim took" in c.value]

    assert took() == [], "no run yet: nothing to say"
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    app.run()
    protocol = app.sidebar.selectbox[0].value
    assert len(took()) == 1 and f"Here, a `{protocol}` claim took" in took()[0] and "its last run on these models" in took()[0]


def test_a_run_whose_exhibits_settle_the_claim_offers_the_debate_and_runs_it_when_asked(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path
) -> None:
    from pipelines.core.events import TurnCompleted
    from pipelines.record.store import RunStore
    from pipelines.stages.exhibit_reading import SETTLED
    from tests.fakes import SETTLING, calibrate_fake

    calibrate_fake(monkeypatch, SETTLING)
    store_url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    grounded = {"protocol": "radar", "belief__grounded": "on", "desk__exhibits": "3", "desk__unit": "passage", "desk__stop_early": "false"}
    app = fake_app(monkeypatch, demo_data_dir, timeout=180, database_url=store_url, **grounded)
    app.text_area(key="claim_text").input("Masks reduce transmission of respiratory viruses")
    app.button[0].click().run()
    assert not app.exception
    first = app.session_state["last_run_id"]
    offer = [i.value for i in app.info if "was not run" in i.value]
    assert len(offer) == 1 and "desk's exhibits settle it" in offer[0] and "SUPPORTS at" in offer[0]
    assert f"Decided by {SETTLED}." in " ".join(c.value for c in app.caption)
    assert len([b for b in app.button if b.label == "Run the debate anyway"]) == 1
    app.switch_page("pages/history.py").run()  # the stored run offers it too, and its button starts the debate on Verify
    app.selectbox(key="history.open").select(first).run()
    assert any("was not run" in i.value for i in app.info)
    next(b for b in app.button if b.label == "Run the debate anyway").click().run()
    assert not app.exception
    second = app.session_state["last_run_id"]
    assert second != first
    store = RunStore(store_url)
    assert store.get_run(second).config["belief"]["debate_when"] == "always"  # type: ignore[union-attr]
    assert store.get_run(second).config["protocol"] == "radar" and store.get_run(second).claim == store.get_run(first).claim  # type: ignore[union-attr]
    assert any(isinstance(e, TurnCompleted) for e in store.events(second)), "the debate ran"
    assert not [b for b in app.button if b.label == "Run the debate anyway"], "a run that debated offers nothing"
