"""The code reads in short pieces (issue 47): no function, method or nested function in the app's code is longer than
80 lines.

Every ``.py`` file under ``pipelines/``, ``components/`` and ``pages/``, and ``app.py`` and ``server.py``, is walked
with ``ast``; a ``def`` or ``async def`` counts from its ``def`` line to its last line (decorators aside). The one
exemption is the Alembic migrations in ``pipelines/core/database/migrations/versions/``: their ``upgrade`` and
``downgrade`` are declarative tables (column after column), which read best whole and are never edited once shipped.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LONGEST = 80
MIGRATIONS = ROOT / "pipelines" / "core" / "database" / "migrations" / "versions"


def app_sources() -> list[Path]:
    files = [path for folder in ("pipelines", "components", "pages") for path in (ROOT / folder).rglob("*.py")]
    return sorted(path for path in [*files, ROOT / "app.py", ROOT / "server.py"] if not path.is_relative_to(MIGRATIONS))


def long_functions(path: Path) -> list[str]:
    """Each function in ``path`` longer than ``LONGEST`` lines, as ``file:line name (n lines)``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > LONGEST:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_the_walk_sees_the_app_and_leaves_out_only_the_migrations() -> None:
    sources = app_sources()
    names = {path.relative_to(ROOT).as_posix() for path in sources}
    assert {"app.py", "server.py", "pipelines/record/export.py", "components/transcript.py"} <= names
    assert any(name.startswith("pages/") for name in names)
    assert not any(name.startswith("pipelines/core/database/migrations/versions/") for name in names)
    assert any(MIGRATIONS.glob("*.py")), "the exemption names a folder that is gone: remove it from this test"


def test_no_function_is_longer_than_80_lines() -> None:
    found = [entry for path in app_sources() for entry in long_functions(path)]
    assert not found, f"split these into well-named parts (at most {LONGEST} lines each):\n" + "\n".join(found)
