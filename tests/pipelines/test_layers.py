"""Layers only point down: the stages and the run context never import the protocols above them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PIPELINES = Path(__file__).resolve().parents[2] / "pipelines"


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("path", [*sorted((PIPELINES / "stages").glob("*.py")), PIPELINES / "context.py"], ids=lambda p: p.name)
def test_stages_and_the_context_do_not_import_protocols(path: Path) -> None:
    upward = sorted(name for name in imported_modules(path) if name == "pipelines.protocols" or name.startswith("pipelines.protocols."))
    assert not upward, f"{path.name} imports {upward}: take what it needs from pipelines.context instead"


def test_the_llm_backends_do_not_import_stages_or_protocols() -> None:
    for path in sorted((PIPELINES / "llm").rglob("*.py")):
        upward = [
            name for name in imported_modules(path) if name.startswith(("pipelines.stages", "pipelines.protocols", "pipelines.runner"))
        ]
        assert not upward, f"{path.relative_to(PIPELINES)} imports {upward}"


@pytest.mark.parametrize("name", ["event_writer", "redaction", "journal", "services", "store"])
def test_what_a_run_is_made_of_does_not_import_the_runner(name: str) -> None:
    upward = [m for m in imported_modules(PIPELINES / f"{name}.py") if m == "pipelines.runner"]
    assert not upward, f"{name}.py imports the runner: the runner uses it, not the other way round"


def test_the_runner_keeps_only_a_runs_life() -> None:
    tree = ast.parse((PIPELINES / "runner.py").read_text())
    classes = sorted(node.name for node in tree.body if isinstance(node, ast.ClassDef))
    assert classes == ["RunHandle"], f"runner.py defines {classes}: storing, redacting and journalling live in their own modules"


def test_the_digest_reads_only_events_and_the_domain_model() -> None:
    """Everything from the store to the page reads runs through the digest, so it sits just above the events."""
    inside = sorted(m for m in imported_modules(PIPELINES / "digest.py") if m.startswith("pipelines."))
    assert set(inside) <= {"pipelines.events", "pipelines.models"}, f"digest.py imports {inside}"
