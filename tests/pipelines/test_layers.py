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
