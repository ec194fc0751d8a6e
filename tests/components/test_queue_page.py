"""AppTest: the claims queue page adds claims, filters them, opens one by its link, and lets only an editor review and publish;
a run on Verify joins the queue; comments show with their author, escaped."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.config import AppSettings
from pipelines.newsroom.queue import ClaimQueue
from pipelines.record.store import RunStore
from tests.components.conftest import ROOT, fake_app
from tests.components.test_sign_in import browser
from tests.fakes import users_file

PAGE = "pages/queue.py"
CLAIM = "Masks reduce transmission of respiratory viruses on river boats"


def queue_page(monkeypatch: pytest.MonkeyPatch, data_dir: Path, **env: str) -> AppTest:
    at = fake_app(monkeypatch, data_dir, timeout=120, **env)
    return at


def open_queue(at: AppTest) -> AppTest:
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def add_typed(at: AppTest, text: str, **fields: str) -> AppTest:
    at.text_area(key="queue.new.text").input(text)
    for name, value in fields.items():
        at.text_input(key=f"queue.new.{name}").input(value)
    next(b for b in at.button if b.key == "queue.new.go").click().run()
    assert not at.exception, at.exception
    return at


def open_the_first_of_two(at: AppTest) -> str:
    """Two claims added, the first (the masks claim) opened in the box: its id."""
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    add_typed(at, CLAIM)
    add_typed(at, "Tides follow the Moon")  # opened last, so the box is moved to the first
    at.selectbox(key="queue.open").select(next(i for i in at.selectbox(key="queue.open").options if "Masks" in i)).run()
    return str(at.selectbox(key="queue.open").value)


def test_claims_added_typed_and_pasted_are_listed_filtered_and_opened(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = open_queue(queue_page(monkeypatch, tmp_path))
    assert at.title[0].value == "📥 Claims queue"
    next(b for b in at.button if b.key == "queue.new.go").click().run()  # no name yet: refused, plainly
    assert any("Enter your name" in e.value for e in at.error)
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    add_typed(at, CLAIM, url="https://example.org/post", claimant="Mayor **Jones**", tags="health, boats")
    assert any("Added" in s.value for s in at.success)
    at.text_area(key="queue.paste").input("The Moon landing was filmed in a studio\nTides follow the Moon")
    next(b for b in at.button if b.key == "queue.paste.go").click().run()
    assert any("Added 2 claims" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert len(table) == 3 and set(table["status"]) == {"🆕 new"}
    at.multiselect(key="queue.f.tags").select("boats").run()
    assert list(at.dataframe[0].value["claim"]) == [CLAIM]
    # the claim just added is open: its claimant is shown as text, its link is on the page
    assert any("Mayor \\*\\*Jones\\*\\*" in m.value for m in at.markdown)
    assert any("/queue?claim=" in c.value for c in at.code)


def test_a_claim_link_opens_the_claim(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = open_queue(queue_page(monkeypatch, tmp_path))
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    add_typed(at, CLAIM)
    claim_id = at.session_state["queue_claim"]
    fresh = queue_page(monkeypatch, tmp_path)
    fresh.query_params["claim"] = claim_id
    open_queue(fresh)
    assert fresh.selectbox(key="queue.open").value == claim_id
    assert fresh.subheader[0].value.startswith("Masks reduce")


def test_a_claim_chosen_in_the_box_stays_open_when_the_pages_note_of_it_is_lost(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A browser that reconnects keeps its widgets' values but not the rest of its session: the choice must hold."""
    at = open_queue(queue_page(monkeypatch, tmp_path))
    claim_id = open_the_first_of_two(at)
    assert at.session_state["queue_claim"] == claim_id
    assert at.subheader[0].value.startswith("Masks reduce")
    for note in ("queue_claim", "queue.open.applied"):
        if note in at.session_state:
            del at.session_state[note]  # what a reconnect loses
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="queue.open").value == claim_id and at.subheader[0].value.startswith("Masks reduce")


def test_a_claim_open_on_the_queue_is_still_open_after_a_visit_to_verify(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Streamlit drops a widget's value when another page runs: the chooser must open the claim again, not show none."""
    at = open_queue(queue_page(monkeypatch, tmp_path))
    claim_id = open_the_first_of_two(at)
    at.switch_page("pages/verify.py").run()
    open_queue(at)
    assert at.selectbox(key="queue.open").value == claim_id and at.subheader[0].value.startswith("Masks reduce")
    assert at.query_params["claim"] == claim_id


def test_check_it_on_verify_is_a_link_that_fills_the_box_and_the_run_joins_the_claim(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path
) -> None:
    at = queue_page(monkeypatch, demo_data_dir, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    masks = open_the_first_of_two(open_queue(at))
    link = next(p.proto for p in at.get("page_link") if "Check it on Verify" in p.proto.label)
    assert link.page.endswith("verify") and parse_qs(link.query_string) == {"check": [masks]}

    at.query_params["check"] = masks  # what the link asks of the app
    at.switch_page("pages/verify.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="claim_text").value == CLAIM
    assert "check" not in at.query_params  # read once: a rerun keeps what the person types next
    at.text_area(key="claim_text").input(CLAIM + " in 2021").run()
    assert at.text_area(key="claim_text").value == CLAIM + " in 2021"
    at.text_area(key="claim_text").input(CLAIM)
    at.selectbox(key="cfg.protocol").select("single").run()
    next(b for b in at.button if b.label == "Verify").click().run()
    assert not at.exception and not [w for w in at.warning if "queue" in w.value], [w.value for w in at.warning]
    open_queue(at)  # the claim is still open, with its run
    assert at.selectbox(key="queue.open").value == masks
    assert any(m.value == "#### Runs (1)" for m in at.markdown) and any("🔎 checking" in c.value for c in at.caption)

    at.query_params["check"] = "0000nothere"  # a wrong link: said plainly
    at.switch_page("pages/verify.py").run()
    assert any("No claim 0000nothere in the claims queue" in w.value for w in at.warning), [w.value for w in at.warning]


def test_only_an_editor_reviews_and_publishes_and_the_address_serves_it(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path
) -> None:
    users = users_file(tmp_path / "users.toml")
    browser(monkeypatch, demo_data_dir, users, "bo")  # Bo's browser, signed in as the sign-in form would have
    at = queue_page(monkeypatch, demo_data_dir, users_file=str(users), organisation="River Facts")
    at.text_area(key="claim_text").input(CLAIM)
    at.selectbox(key="cfg.protocol").select("single").run()
    next(b for b in at.button if b.label == "Verify").click().run()
    assert not at.exception
    open_queue(at)
    rows = at.dataframe[0].value
    assert CLAIM in list(rows["claim"])
    claim_id = rows[rows["claim"] == CLAIM]["id"].iloc[0]
    at.selectbox(key="queue.open").select(claim_id).run()
    assert any("Only an editor reviews and publishes; you are signed in as a checker" in c.value for c in at.caption)
    assert not [b for b in at.button if b.label == "Publish"]
    at.text_area(key=f"queue.comments.{claim_id}.text").input("Called the operator: <b>no data</b> before 2020").run()
    next(b for b in at.button if b.key == f"queue.comments.{claim_id}.go").click().run()
    assert any("Bo Lind" in m.value for m in at.markdown)
    assert any("\\<b\\>no data\\</b\\>" in m.value for m in at.markdown)  # shown as text
    assert at.dataframe[-1].value["what"].iloc[-1].startswith("commented")  # and in the claim's history

    browser(monkeypatch, demo_data_dir, users, "ana")
    at = queue_page(monkeypatch, demo_data_dir, users_file=str(users), organisation="River Facts")
    at.query_params["claim"] = claim_id
    open_queue(at)
    at.selectbox(key=f"queue.review.{claim_id}.label").select("REFUTED")
    at.text_area(key=f"queue.review.{claim_id}.reason").input("The boat operator's figures show no change.")
    next(b for b in at.button if b.label == "Record the review").click().run()  # a form: the choices go with the button
    assert any("Reviewed: REFUTED" in s.value for s in at.success), [e.value for e in at.error]
    # No claimant and no address where it appeared: the editor is warned, and Publish asks for a tick first (issue 46).
    assert any("This claim has no claimant and no address where it appeared" in w.value for w in at.warning), [w.value for w in at.warning]
    next(b for b in at.button if b.label == "Publish").click().run()
    assert any("tick “Publish without claimant or address where it appeared”" in e.value for e in at.error), [e.value for e in at.error]
    queue = ClaimQueue(RunStore(AppSettings().sqlite_url).engine)
    assert queue.get(claim_id).status == "in review" and queue.served(claim_id) is None  # type: ignore[union-attr]
    at.checkbox(key=f"queue.publish.bare.{claim_id}").check()
    next(b for b in at.button if b.label == "Publish").click().run()
    assert any("Published at" in s.value for s in at.success), [e.value for e in at.error]
    doc = queue.served(claim_id)  # what its public address answers, from the database
    assert doc is not None and doc["reviewRating"]["alternateName"] == "False" and doc["author"][0]["name"] == "River Facts"
    assert doc["author"][1]["name"] == "Ana Ruiz"


def test_a_batch_adds_each_claim_to_the_queue_with_its_run(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> None:
    at = queue_page(monkeypatch, demo_data_dir, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    at.switch_page("pages/batch.py").run()
    at.text_area(key="batch_paste").input("Masks reduce transmission of respiratory viruses on trams\nVaccines cause autism in trams")
    at.button[0].click().run()
    assert not at.exception and not [w for w in at.warning if "claims queue" in w.value]
    open_queue(at)
    table = at.dataframe[0].value
    assert sorted(table["claim"]) == ["Masks reduce transmission of respiratory viruses on trams", "Vaccines cause autism in trams"]
    assert set(table["status"]) == {"🔎 checking"}  # each came with its run
    at.selectbox(key="queue.open").select(table["id"].iloc[0]).run()
    assert any(m.value.startswith("#### Runs (1)") for m in at.markdown)


def test_a_database_that_goes_away_is_said_plainly_and_the_typed_claim_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sqlalchemy.exc import OperationalError

    from pipelines.newsroom.queue import ClaimQueue

    at = open_queue(queue_page(monkeypatch, tmp_path))
    at.sidebar.text_input[0].input("Ana Ruiz").run()

    def gone(*args: object, **kwargs: object) -> None:
        raise OperationalError("INSERT", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(ClaimQueue, "add", gone)
    add_typed(at, CLAIM)
    assert any("was not saved: the run database did not answer" in e.value for e in at.error)
    assert at.text_area(key="queue.new.text").value == CLAIM  # nothing typed is lost


def test_a_run_link_opens_the_run_on_history_where_its_exhibits_take_comments(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path
) -> None:
    at = queue_page(monkeypatch, demo_data_dir, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    at.sidebar.text_input[0].input("Bo Lind").run()
    at.text_area(key="claim_text").input(CLAIM)
    at.selectbox(key="cfg.protocol").select("single").run()
    next(b for b in at.button if b.label == "Verify").click().run()
    link = next(c.value for c in at.code if "/history?run=" in c.value)
    run_id = link.rsplit("=", 1)[1]

    other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)  # a new session (AppTest reads the address on its first run)
    other.query_params["run"] = run_id  # the link given to the app's root: it goes to History
    other.run()
    assert not other.exception, other.exception
    assert other.title[0].value == "🗂️ History" and other.subheader[0].value.startswith("Masks reduce")
    assert any("In the claims queue: checking" in p.label for p in other.get("page_link"))
    other.sidebar.text_input[0].input("Ana Ruiz").run()
    key = f"history.comments.{run_id}"
    other.selectbox(key=f"{key}.on").select("E1")
    other.text_area(key=f"{key}.text").input("E1 is about buses, not boats").run()
    next(b for b in other.button if b.key == f"{key}.go").click().run()
    assert any("on exhibit E1" in m.value and "Ana Ruiz" in m.value for m in other.markdown)


def test_history_compares_runs_of_differently_worded_claims(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, tmp_path: Path) -> None:
    at = queue_page(monkeypatch, demo_data_dir, database_url=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    at.selectbox(key="cfg.protocol").select("single").run()
    for claim in ("Masks reduce transmission of respiratory viruses", "Face masks lower the spread of respiratory viruses"):
        at.text_area(key="claim_text").input(claim)
        next(b for b in at.button if b.label == "Verify").click().run()
    at.switch_page("pages/history.py").run()
    first = at.dataframe[0].value["id"].iloc[0]
    at.selectbox(key="history.open").select(first).run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "claim, as worded" in d.value.columns)  # this run and the other, worded differently
    assert list(table["run"]) == ["this run", "the other"] and table["claim, as worded"].nunique() == 2
    assert any("worded differently" in c.value for c in at.caption)
    assert any(m.value.startswith("**Exhibits both used**") for m in at.markdown)


def test_a_page_whose_database_stops_answering_says_so_plainly() -> None:
    def script() -> None:
        from sqlalchemy.exc import OperationalError

        from components.pages import run_page

        class History:  # a page whose first read of the run store fails
            def run(self) -> None:
                raise OperationalError("SELECT", {}, Exception("could not connect to server"))

        run_page(History())

    at = AppTest.from_function(script).run()
    assert not at.exception, "no traceback"
    assert any("The run database did not answer (OperationalError)" in e.value and "Nothing stored is lost" in e.value for e in at.error)


def test_the_run_a_review_rests_on_keeps_its_line_when_the_run_is_overridden(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    """The form sends back the line it shows; a verdict in that line rested the review on another run once it changed."""
    from pipelines.core.config import AppSettings
    from pipelines.core.events import VerdictOverridden
    from pipelines.record.store import RunStore

    at = queue_page(monkeypatch, demo_data_dir)
    at.sidebar.text_input[0].input("Ana Ruiz").run()
    at.text_area(key="claim_text").input(CLAIM + " and ferries")
    at.selectbox(key="cfg.protocol").select("single").run()
    next(b for b in at.button if b.label == "Verify").click().run()
    run_id = at.session_state["last_run_id"]
    open_queue(at)
    rows = at.dataframe[0].value
    claim_id = rows[rows["claim"] == CLAIM + " and ferries"]["id"].iloc[0]
    at.selectbox(key="queue.open").select(claim_id).run()
    box = f"queue.review.{claim_id}.run"
    before = at.selectbox(key=box).options
    RunStore(AppSettings(data_dir=demo_data_dir).sqlite_url).append(run_id, VerdictOverridden(label="REFUTES", by="Bo", note="retracted"))
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key=box).options == before and before[0].endswith(run_id)


def test_a_single_user_desk_checks_claims_as_before_with_no_workers_section(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On SQLite (the embedded default) the queue offers no "Check these" even when batches on workers is set: nothing would run them."""
    at = open_queue(queue_page(monkeypatch, tmp_path, batch_on_workers="true"))
    open_the_first_of_two(at)
    assert not any(b.key == "queue.check.go" for b in at.button)
    assert not any(m.label == "Claims to check" for m in at.multiselect)
    assert any(link.label == "Check it on Verify" for link in at.get("page_link"))
