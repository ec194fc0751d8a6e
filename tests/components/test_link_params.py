"""AppTest: a link's ``?claim=``, ``?run=`` or ``?check=`` that holds what no id can (a NUL, a control character, a
direction override, 500 characters) is answered with a plain warning on the page it opens, never an exception box."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.conftest import ROOT, fake_app

BAD = ["abc\x00def", "\u202eabc"]


@pytest.mark.parametrize("param,title", [("claim", "📥 Claims queue"), ("run", "🗂️ History"), ("check", "⚖️ Verify a claim")])
@pytest.mark.parametrize("value", BAD, ids=["nul", "bidi"])
def test_a_link_whose_id_no_desk_makes_is_answered_plainly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, param: str, title: str, value: str
) -> None:
    fake_app(monkeypatch, tmp_path)  # the desk's settings for this test
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params[param] = value
    page = {"claim": "pages/queue.py", "run": "pages/history.py", "check": "pages/verify.py"}[param]
    at.run()
    if not at.title or at.title[0].value != title:  # History (for a run's link) and Verify (the first page) open at the root
        at.switch_page(page).run()
    assert not at.exception, at.exception
    assert at.title[0].value == title
    warnings = [w.value for w in at.warning]
    assert any("not an id this desk makes" in w for w in warnings), warnings
    assert not any("\x00" in w or "\u202e" in w for w in warnings)


@pytest.mark.parametrize("param,page", [("claim", "pages/queue.py"), ("run", "pages/history.py"), ("check", "pages/verify.py")])
def test_a_link_to_an_id_that_could_be_one_but_is_not_here_says_so_escaped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, param: str, page: str
) -> None:
    fake_app(monkeypatch, tmp_path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params[param] = "<b>nothere</b>"
    at.run()
    if page == "pages/queue.py":  # History (for a run's link) and Verify (the first page) open at the app's root
        at.switch_page(page).run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning]
    assert any("nothere" in w for w in warnings) and not any("<b>" in w for w in warnings), warnings


@pytest.mark.parametrize("value", ["\x00", "abc\x00", "\u202eabc", "\u200b\u200b", "x" * 201])
def test_what_no_id_can_hold_is_told_apart_from_what_an_imported_id_may(value: str) -> None:
    from components.state import link_id_problem

    assert link_id_problem(value) is not None
    assert link_id_problem("3f2a9c1b7d4e") is None and link_id_problem("run 7-imported-1") is None
