"""The house's folder rules: each room of ``pipelines/`` imports only the rooms below it.

``pipelines/`` has twelve entries; three of its folders group rooms a newcomer looks for together, and each room
inside keeps its own rule: ``core/`` (the ground, ``config`` and ``events``), ``run/`` (a run's life, with ``llm/`` and
``tools/``, what a run calls out to), ``newsroom/`` (the shared desk, with ``access/``, who may do what).

From the bottom up:
- the ground: ``core/errors``, ``core/domain``, ``core/personas``, ``core/machine``, ``core/text/`` (safe text,
  redaction, addresses) and ``core/database/`` (every table of the desk's one database, its migrations, how an engine
  is opened);
- the protocols' declarations (``protocols.declared``: the registry ``protocols/base.py``, each protocol folder's
  ``__init__.py`` and ``settings.py``), which ``config`` composes ``RunConfig`` from;
- ``core/config`` and ``core/events``; ``eval/metrics.py`` (pure scores);
- ``calibration/`` (where a model's calibration is kept, and how one is fitted);
- ``run/llm/`` (model backends) and ``run/tools/`` (corpus, web, fetch, memory);
- ``run/context.py`` (what a run hands its protocol), ``stages/`` and ``prompts/``;
- ``protocols/``;
- ``record/`` (what a run leaves behind) and ``run/`` (a run's life); ``newsroom/access/`` (users, roles, sign-in) beside them;
- ``newsroom/`` (the desk's queue, comments, review and publishing) over records and runs;
- ``eval/`` and ``cli/`` at the top.
A room may import from its own folder and from any room below; never from above.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PIPELINES = Path(__file__).resolve().parents[2] / "pipelines"

GROUND = {"errors", "domain", "personas", "machine", "database", "text"}
# What a debate is made of: the rooms every room from the record up may import.
DEBATE = {"config", "events", "llm", "tools", "stages", "protocols", "protocols.declared"}
BELOW: dict[str, set[str]] = {  # room -> the rooms it may import (besides its own)
    "text": {"errors"},
    "domain": {"errors"},
    "personas": set(),
    "machine": set(),
    "database": {"errors", "pipelines"},
    "errors": set(),
    "tools.source_policy": GROUND,
    "protocols.declared": GROUND | {"protocols.declared"},
    "config": GROUND | {"tools.source_policy", "protocols.declared"},
    "events": GROUND,
    "llm": GROUND | {"config", "events", "protocols.declared"},
    "tools": GROUND | {"config", "events", "tools.source_policy", "protocols.declared"},
    "run.context": GROUND | {"config", "events", "llm", "tools", "protocols.declared"},
    "prompts": GROUND | {"config", "protocols.declared"},
    "eval.metrics": set(),
    "calibration": GROUND | {"config", "events", "eval.metrics", "protocols.declared"},
    "stages": GROUND | {"config", "events", "llm", "tools", "run.context", "prompts", "calibration", "protocols.declared"},
    "protocols": GROUND
    | {"config", "events", "llm", "tools", "run.context", "prompts", "stages", "calibration", "pipelines", "protocols.declared"},
    "record": GROUND | DEBATE | {"calibration", "pipelines"},
    "run": GROUND | DEBATE | {"prompts", "record", "calibration", "pipelines", "access"},
    "eval": GROUND | DEBATE | {"record", "run", "calibration", "access", "newsroom"},
    "access": GROUND | {"config", "protocols.declared"},
    "newsroom": GROUND | DEBATE | {"record", "run", "access", "pipelines"},
    "cli": {"*"},
}


GROUPED = (["run", "llm"], ["run", "tools"], ["newsroom", "access"])  # rooms kept in a group's folder (and core/'s, all)


def room_of(module: str) -> str:
    """``pipelines.run.context`` -> ``run.context``, ``pipelines.record.store`` -> ``record``, ``pipelines`` -> ``pipelines``;
    a room inside a group is its own: ``pipelines.core.config`` -> ``config``, ``pipelines.core.text.safety`` -> ``text``,
    ``pipelines.run.llm.client`` -> ``llm``, ``pipelines.newsroom.access.roles`` -> ``access``;
    ``pipelines.protocols.base``, ``pipelines.protocols.desk`` and ``pipelines.protocols.desk.settings`` -> ``protocols.declared``."""
    parts = module.split(".")[1:]
    if (parts[:1] == ["core"] and len(parts) > 1) or parts[:2] in GROUPED:
        parts = parts[1:]
    if not parts:
        return "pipelines"
    if parts[0] == "protocols" and (parts[1:] == ["base"] or len(parts) == 2 or parts[2:] in (["__init__"], ["settings"])):
        return "protocols.declared"
    if parts[:2] in (["run", "context"], ["tools", "source_policy"], ["eval", "metrics"]):
        return ".".join(parts[:2])
    return parts[0]


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "pipelines.core":  # from pipelines.core import events
            names.update(f"pipelines.core.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


MODULES = sorted(p for p in PIPELINES.rglob("*.py") if p.name != "__main__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PIPELINES)))
def test_each_room_imports_only_the_rooms_below_it(path: Path) -> None:
    room = room_of("pipelines." + ".".join(path.relative_to(PIPELINES).with_suffix("").parts))
    if room == "__init__" or room == "pipelines":
        return
    allowed = BELOW[room]
    own = room if room == "protocols.declared" else room.split(".")[0]  # a declaration never imports its protocol's run
    upward = sorted(
        name
        for name in imported_modules(path)
        if name.startswith("pipelines")
        and "*" not in allowed
        and room_of(name) not in allowed
        and room_of(name).split(".")[0] != own
        and not (room_of(name) in ("run.context", "eval.metrics") and room_of(name) in allowed)
    )
    assert not upward, f"{path.relative_to(PIPELINES)} ({room}) imports {upward}, which sit above it: see this test's docstring"


def test_every_room_has_a_rule_and_a_one_line_docstring() -> None:
    rooms = {room_of("pipelines." + ".".join(p.relative_to(PIPELINES).with_suffix("").parts)) for p in MODULES} - {"__init__", "pipelines"}
    assert rooms <= set(BELOW), f"rooms without a folder rule: {sorted(rooms - set(BELOW))}"
    folders = [p for p in PIPELINES.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    folders += [PIPELINES / "core" / "text", PIPELINES / "core" / "database", *(PIPELINES.joinpath(*g) for g in GROUPED)]
    for folder in folders:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        assert doc, f"pipelines/{folder.relative_to(PIPELINES)}/__init__.py has no docstring saying what the room holds"


def test_pipelines_has_at_most_twelve_entries() -> None:
    """A newcomer reads the top of pipelines/ at a glance (issue 47): group a new room into core/, run/ or newsroom/."""
    entries = sorted(p.name for p in PIPELINES.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 12, f"pipelines/ has {len(entries)} entries: {entries}"


def test_the_runner_keeps_only_a_runs_life() -> None:
    tree = ast.parse((PIPELINES / "run" / "runner.py").read_text())
    classes = sorted(node.name for node in tree.body if isinstance(node, ast.ClassDef))
    assert classes == ["RunHandle"], f"runner.py defines {classes}: storing, redacting and journalling live in their own modules"


def test_what_a_run_leaves_behind_does_not_import_the_runner() -> None:
    for path in sorted((PIPELINES / "record").glob("*.py")):
        upward = [m for m in imported_modules(path) if m.startswith("pipelines.run") and room_of(m) in ("run", "run.context")]
        assert not upward, f"{path.name} imports {upward}: the runner uses the record, not the other way round"


def test_the_digest_reads_only_events_and_the_domain_model() -> None:
    """Everything from the store to the page reads runs through the digest, so it sits just above the events (and the verdict
    words, and the text test that tells a turn copied from the opponent's)."""
    inside = sorted(m for m in imported_modules(PIPELINES / "record" / "digest.py") if m.startswith("pipelines."))
    allowed = {"pipelines.core.events", "pipelines.core.domain", "pipelines.record.labels", "pipelines.core.text.echo"}
    assert set(inside) <= allowed, f"digest.py imports {inside}"
    echo = [m for m in imported_modules(PIPELINES / "core" / "text" / "echo.py") if m.startswith("pipelines.")]
    assert not echo, f"text/echo.py imports {echo}: it is a leaf"
    labels = [
        m for m in imported_modules(PIPELINES / "record" / "labels.py") if m.startswith("pipelines.") and m != "pipelines.core.domain"
    ]
    assert not labels, f"labels.py, the verdict vocabulary, imports {labels}: it is a leaf (the domain's Label aside)"


def test_nothing_under_tests_imports_the_benchmarks() -> None:
    """bench/ holds scripts (their own tests beside them, in bench/tests/); the test suite stands without them."""
    tests = PIPELINES.parent / "tests"
    for path in sorted(tests.rglob("*.py")):
        from_bench = sorted(m for m in imported_modules(path) if m == "bench" or m.startswith("bench."))
        assert not from_bench, f"{path.relative_to(tests.parent)} imports {from_bench}"


def test_every_table_is_declared_in_the_database_room() -> None:
    """The desk's tables live in ``database/tables.py``; a repository reads and writes them, never declares one of its own
    on the desk's base (the migrations are built from that one file)."""
    declaring = sorted(
        str(path.relative_to(PIPELINES))
        for path in PIPELINES.rglob("*.py")
        if path != PIPELINES / "core" / "database" / "tables.py" and "DeskTable" in path.read_text()
    )
    assert not declaring, f"{declaring} declare tables outside pipelines/core/database/tables.py"
