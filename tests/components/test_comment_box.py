"""AppTest: the comment box refuses a comment that shows nothing, says so, and keeps nothing (issue 46)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.components.test_queue_page import open_queue, open_the_first_of_two, queue_page


def test_the_comment_box_refuses_zero_width_spaces_and_keeps_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at: AppTest = open_queue(queue_page(monkeypatch, tmp_path))
    claim_id = open_the_first_of_two(at)
    at.text_area(key=f"queue.comments.{claim_id}.text").input("\u200b\u200b\u200b").run()
    next(b for b in at.button if b.key == f"queue.comments.{claim_id}.go").click().run()
    assert not at.exception
    assert any("shows nothing" in e.value for e in at.error)
    assert not any(c.value.startswith("**Ana Ruiz**") for c in at.markdown)  # no comment listed
