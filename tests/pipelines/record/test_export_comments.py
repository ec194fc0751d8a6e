"""The desk's comments on a run and its exhibits travel in the JSON record and the Markdown report, escaped for each."""

from __future__ import annotations

import json

from pipelines.record.comments import Comment
from pipelines.record.export import export_run
from pipelines.record.record_file import load_record
from pipelines.record.store import RunStore
from tests.pipelines.newsroom.test_queue import make_run
from tests.stores import store_url  # noqa: F401  (the fixture)

COMMENTS = (
    Comment(id=1, author="Ana Ruiz", at=1_795_000_000.0, text="The judge leaned on one study.", run_id="r1"),
    Comment(
        id=2, author="Bo [Lind](javascript:x)", at=1_795_000_060.0, text="E1 is a **preprint** </script>", run_id="r1", evidence_id="E1"
    ),
)


def test_comments_are_kept_in_the_json_record_and_the_markdown_report(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    make_run(store, "r1")
    run, events = store.get_run("r1"), store.events("r1")
    assert run is not None
    record = export_run(run, events, "json", comments=COMMENTS)
    assert "</script>" not in record
    data = json.loads(record)
    assert [(c["author"], c["evidence_id"], c["text"]) for c in data["comments"]] == [
        ("Ana Ruiz", None, "The judge leaned on one study."),
        ("Bo [Lind](javascript:x)", "E1", "E1 is a **preprint** </script>"),
    ]
    load_record(record)  # a record with comments imports as any other
    report = export_run(run, events, "md", comments=COMMENTS)
    assert "## Comments" in report
    assert "Ana Ruiz on the run: The judge leaned on one study\\." in report
    assert (
        "Bo \\[Lind\\]\\(javascript\\:x\\) on exhibit E1: E1 is a \\*\\*preprint\\*\\* \\</script\\>" in report
    )  # text, never a link or markup
    assert "## Comments" not in export_run(run, events, "md")
