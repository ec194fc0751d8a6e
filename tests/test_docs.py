"""The README stays true: its options table is the config's, and it starts with the two commands."""

from pathlib import Path

from pipelines.cli import options_table

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_options_table_matches_the_config() -> None:
    start, end = README.index("<!-- options:start -->"), README.index("<!-- options:end -->")
    assert README[start:end].split("\n", 1)[1].strip() == options_table().strip(), "run `make docs` to refresh the README"


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in block.strip().splitlines()] == [["make", "run"], ["make", "test"]]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert "make test" in ci
