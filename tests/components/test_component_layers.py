"""The components render from the run's digest and each other's public functions: no private calls across files, no import circle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

COMPONENTS = Path(__file__).resolve().parents[2] / "components"
MODULES = sorted(COMPONENTS.glob("*.py"))


def _component_imports(path: Path) -> set[str]:
    """Every components module ``path`` imports, at the top or under TYPE_CHECKING alike."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("components."):
            found.add(node.module.removeprefix("components."))
    return found


def test_no_import_circle_in_components() -> None:
    graph = {path.stem: _component_imports(path) for path in MODULES}

    def circle_from(name: str, trail: tuple[str, ...]) -> tuple[str, ...] | None:
        if name in trail:
            return (*trail[trail.index(name) :], name)
        for nxt in sorted(graph.get(name, ())):
            found = circle_from(nxt, (*trail, name))
            if found:
                return found
        return None

    circles = [c for name in graph if (c := circle_from(name, ()))]
    assert not circles, f"import circle: {' -> '.join(circles[0])}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_private_calls_on_other_objects(path: Path) -> None:
    """``view._render_x()`` from another file is a sign the two should share a public function (or the digest)."""
    private = [
        f"{path.name}:{node.lineno}: {ast.unparse(node)[:80]}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and re.match(r"_[a-z]", node.attr)  # not a dunder, nor a renamed tuple field (pandas' itertuples: row._2)
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    assert not private, "\n".join(private)
