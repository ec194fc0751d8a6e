import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli.main import main
from tests.fakes import SINGLE_ON_FAKE_DEMO

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBATEDESK_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "pipelines", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


def test_verify_json_prints_one_event_per_line_ending_in_a_verdict(data_dir: Path) -> None:
    result = cli(
        "verify",
        "Masks reduce transmission of respiratory viruses",
        *SINGLE_ON_FAKE_DEMO,
        "--no-web",
        "--json",
        data_dir=data_dir,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "RunStarted" and lines[-1]["type"] == "VerdictReached"
    assert lines[-1]["verdict"]["label"] in {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}
    assert "in the claims queue as" in result.stderr, "a run from the command line joins the queue as a run on Verify does"
    listed = cli("queue", "list", "--json", data_dir=data_dir)
    claims = [json.loads(line) for line in listed.stdout.splitlines()]
    assert any(c["text"] == "Masks reduce transmission of respiratory viruses" and c["status"] == "checking" for c in claims)


def test_ingest_then_corpora_lists_counts(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Notes\n\nThe tower is tall. It grows in summer. Iron expands.")
    result = cli("ingest", str(tmp_path), "--corpus", "mine", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    assert "mine: 1 document, 1 passage (1 new" in result.stdout
    listing = cli("corpora", data_dir=data_dir)
    assert "mine\t1 documents\t1 passages" in listing.stdout


def test_ingest_imports_no_chat_models_run_store_or_torch(data_dir: Path, tmp_path: Path) -> None:
    """An ingestion's process start is part of its time: it loads the corpus index and MiniLM on ONNX Runtime, nothing else."""
    (tmp_path / "b.txt").write_text("Cranes lift containers. Tides rise twice a day.")
    script = (
        "import sys; from pipelines.cli.main import main; code = main(sys.argv[1:]); "
        "print(sorted(m for m in ('langchain_core', 'openai', 'sqlalchemy', 'torch', 'pipelines.run.services') if m in sys.modules)); "
        "raise SystemExit(code)"
    )
    env = {**os.environ, "DEBATEDESK_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "DEBATEDESK_EMBEDDINGS": "onnx"}
    result = subprocess.run(
        [sys.executable, "-c", script, "ingest", str(tmp_path), "--corpus", "light"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "light: 1 document, 1 passage (1 new" in result.stdout
    assert result.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("verify", "", "--backend", "fake"), "the claim is empty"),
        (("verify", "x", "--backend", "nope"), "unknown backend 'nope'"),
        (("verify", "x", "--backend", "fake", "--corpus", "nope"), "unknown corpus 'nope'"),
        (("ingest", "/no/such/file.txt", "--corpus", "c"), "no such file"),
    ],
)
def test_bad_input_gets_a_clear_message_and_exit_code_2(
    data_dir: Path, args: tuple[str, ...], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(data_dir))
    assert main(list(args)) == 2
    assert message in capsys.readouterr().err


def test_a_web_search_that_failed_says_what_was_searched_instead(capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli.main import _print_human
    from pipelines.core.events import WebSearchUnavailable

    _print_human(WebSearchUnavailable(reason="web search unavailable: no network", fallback="corpus search", agent="Search", round=1))
    _print_human(WebSearchUnavailable(reason="web search unavailable: timed out", agent="Analyst", round=1))
    assert capsys.readouterr().out.splitlines() == [
        "  ! web search unavailable: no network; corpus search instead",
        "  ! web search unavailable: timed out",
    ]
