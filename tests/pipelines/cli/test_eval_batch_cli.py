"""`python -m pipelines eval` and `batch`, run in-process on the fake backend over the demo corpus."""

import csv
import json
from pathlib import Path

import pytest

from pipelines.cli.main import main
from pipelines.eval.records import EvalStore
from pipelines.record.store import RunStore
from tests.fakes import SINGLE_ON_FAKE_DEMO


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> Path:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(demo_data_dir))
    monkeypatch.setenv("DEBATEDESK_RETRIEVAL__WEB_SEARCH", "false")
    return demo_data_dir


def test_eval_of_a_desks_own_jsonl_prints_and_keeps_the_report(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "desk.jsonl"
    rows = [
        {"id": "m", "claim": "Masks reduce transmission of respiratory viruses", "label": "Mostly true"},
        {"id": "v", "claim": "Vaccines cause autism", "label": "FALSE"},
        {"id": "c", "claim": "Cheese is made on the Moon", "label": "NEI"},
    ]
    claims.write_text("\n".join(json.dumps(r) for r in rows))
    code = main(
        [
            "eval",
            "--dataset",
            str(claims),
            *SINGLE_ON_FAKE_DEMO,
            "--label-map",
            "Mostly true=SUPPORTS",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "accuracy" in out.out and "macro-F1" in out.out and "confusion" in out.out and "[3/3]" in out.err
    saved = sorted((env / "evals").glob("*-single-*.json"))
    assert saved
    report = json.loads(saved[-1].read_text())
    assert report["dataset"] == "desk" and report["claims"] == 3 and [r["id"] for r in report["rows"]] == ["m", "v", "c"]
    store = EvalStore(RunStore(f"sqlite:///{env / 'runs.sqlite'}").engine)
    assert report["id"] in [r.id for r in store.recent()]


def test_eval_with_an_unknown_label_says_how_to_map_it(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "desk.jsonl"
    claims.write_text(json.dumps({"claim": "Masks work", "label": "Misleading"}))
    assert main(["eval", "--dataset", str(claims), "--backend", "fake"]) == 2
    assert "--label-map" in capsys.readouterr().err


def test_eval_with_an_unknown_protocol_lists_the_valid_ones(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", "check-covid", "--protocol", "nope", "--backend", "fake"]) == 2
    assert "unknown protocol 'nope'; choose one of" in capsys.readouterr().err


def test_batch_writes_every_row_and_reports_the_failed_claim(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "claims.csv"
    source.write_text(f"id,claim\na,Masks reduce transmission of respiratory viruses\nb,{'x' * 2500}\nc,Vaccines cause autism\n")
    out = tmp_path / "results"
    code = main(
        [
            "batch",
            str(source),
            *SINGLE_ON_FAKE_DEMO,
            "--no-web",
            "--concurrency",
            "2",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 1  # one claim failed
    assert "2 completed, 1 failed" in printed.out and "failed: b: the claim is 2,500 characters" in printed.out
    rows = list(csv.DictReader(out.with_suffix(".csv").open()))
    assert [(r["id"], r["status"]) for r in rows] == [("a", "completed"), ("b", "failed"), ("c", "completed")]
    assert len(out.with_suffix(".jsonl").read_text().splitlines()) == 3


def test_batch_with_a_wrong_column_says_which_columns_it_found(env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "claims.csv"
    source.write_text("statement\nMasks work\n")
    assert main(["batch", str(source), "--backend", "fake"]) == 2
    assert "no 'claim' column (found columns: 'statement')" in capsys.readouterr().err


def test_a_batch_from_the_command_line_joins_the_claims_queue_with_each_row_s_details(
    env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch on the page joined the claims queue; the same file from the command line did not."""
    from pipelines.core.config import AppSettings
    from pipelines.newsroom.queue import ClaimQueue, QueueFilter

    source = tmp_path / "claims.csv"
    source.write_text(
        "claim,url,claimant,tags\n"
        "Ferries in the fjords run late in winter,https://example.org/ferries,Port office,transport\n"
        "Harbour seals sleep underwater,not an address,A blog,animals\n"
    )
    assert main(["batch", str(source), *SINGLE_ON_FAKE_DEMO, "--no-web", "--out", str(tmp_path / "results")]) == 0
    printed = capsys.readouterr().err
    assert "2 of 2 claims joined the claims queue" in printed
    assert "claim 2 (id '2'): where it appeared must be a web address" in printed and "left out of the claims queue" in printed
    queue = ClaimQueue(RunStore(AppSettings(data_dir=env).sqlite_url).engine)
    ferries, seals = (queue.find(QueueFilter(text=text))[0] for text in ("Ferries in the fjords", "Harbour seals"))
    assert (ferries.appearance.url, ferries.appearance.claimant, ferries.tags, ferries.status) == (
        "https://example.org/ferries", "Port office", ("transport",), "checking"
    )  # fmt: skip
    assert (seals.appearance.url, seals.appearance.claimant, seals.tags) == ("", "A blog", ("animals",))
    assert len(queue.runs_of(ferries.id)) == 1 and len(queue.runs_of(seals.id)) == 1
