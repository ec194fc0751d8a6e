"""Comments kept in the record: only something visible, no NUL, and only on runs and exhibits that exist (issue 46)."""

from __future__ import annotations

import pytest

from pipelines.record.comments import CommentRefusedError, check_comment
from pipelines.record.digest import digest
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config

CLAIM = "Masks reduce transmission of respiratory viruses"


@pytest.fixture
def run_id(services: Services) -> str:
    services.chat_override = FakeChatModel()
    events = list(stream_run(CLAIM, fake_config(protocol="single"), services))
    return str(events[0].run_id)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("\u200b\u200b\u200b", "shows nothing"),  # zero-width spaces
        ("\u2800 \u3164", "shows nothing"),  # a Braille blank and a Hangul filler: letters drawn as nothing
        ("\ufeff\u200d \n", "shows nothing"),
        ("fine\x00then", r"U\+0000 at position 5"),
        ("   ", "is empty"),
        ("x" * 4001, "the limit is 4,000"),
    ],
)
def test_a_comment_that_shows_nothing_or_holds_nul_is_refused_plainly(services: Services, text: str, said: str) -> None:
    assert services.store is not None
    with pytest.raises(CommentRefusedError, match=said):
        check_comment(services.store.engine, text)


def test_comments_only_on_runs_and_exhibits_that_exist(services: Services, run_id: str) -> None:
    assert services.store is not None
    engine = services.store.engine
    exhibit = next(iter(digest(services.store.events(run_id)).evidence))
    assert check_comment(engine, "  Checked with the lab.  ", run_id=run_id) == "Checked with the lab."
    assert check_comment(engine, "This one is a preprint", run_id=run_id, evidence_id=exhibit) == "This one is a preprint"
    with pytest.raises(CommentRefusedError, match="there is no run 'nope'"):
        check_comment(engine, "hello", run_id="nope")
    with pytest.raises(CommentRefusedError, match=f"run {run_id} has no exhibit 'E999'"):
        check_comment(engine, "hello", run_id=run_id, evidence_id="E999")
    with pytest.raises(CommentRefusedError, match="needs the run"):
        check_comment(engine, "hello", evidence_id=exhibit)
