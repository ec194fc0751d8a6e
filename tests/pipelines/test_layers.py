"""The house's folder rules: each room of ``pipelines/`` imports only the rooms below it.

From the bottom up:
- the ground: ``errors``, ``domain``, ``personas``, ``machine``, ``text/`` (safe text, redaction, addresses) and
  ``database/`` (every table of the desk's one database, its migrations, how an engine is opened);
- the protocols' declarations (``protocols.declared``: the registry ``protocols/base.py``, each protocol folder's
  ``__init__.py`` and ``settings.py``), which ``config`` composes ``RunConfig`` from;
- ``config`` and ``events``; ``eval/metrics.py`` (pure scores);
- ``calibration/`` (where a model's calibration is kept, and how one is fitted);
- ``llm/`` (model backends) and ``tools/`` (corpus, web, fetch, memory);
- ``run/context.py`` (what a run hands its protocol), ``stages/`` and ``prompts/``;
- ``protocols/``;
- ``record/`` (what a run leaves behind) and ``run/`` (a run's life);
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
    "record": GROUND | {"config", "events", "llm", "tools", "stages", "protocols", "calibration", "pipelines", "protocols.declared"},
    "run": GROUND
    | {
        "config",
        "events",
        "llm",
        "tools",
        "stages",
        "protocols",
        "prompts",
        "record",
        "calibration",
        "pipelines",
        "access",
        "protocols.declared",
    },
    "eval": GROUND
    | {
        "config",
        "events",
        "llm",
        "tools",
        "stages",
        "protocols",
        "record",
        "run",
        "calibration",
        "access",
        "newsroom",
        "protocols.declared",
    },
    "access": GROUND | {"config", "protocols.declared"},
    "newsroom": GROUND
    | {"config", "events", "llm", "tools", "stages", "protocols", "record", "run", "access", "pipelines", "protocols.declared"},
    "cli": {"*"},
}


def room_of(module: str) -> str:
    """``pipelines.run.context`` -> ``run.context``, ``pipelines.record.store`` -> ``record``, ``pipelines`` -> ``pipelines``;
    ``pipelines.protocols.base``, ``pipelines.protocols.desk`` and ``pipelines.protocols.desk.settings`` -> ``protocols.declared``."""
    parts = module.split(".")[1:]
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
        if isinstance(node, ast.ImportFrom) and node.module:
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
    rooms = {p.name for p in PIPELINES.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    rooms |= {p.stem for p in PIPELINES.glob("*.py") if p.stem not in {"__init__", "__main__"}}
    assert rooms - {"run"} <= set(BELOW), f"rooms without a folder rule: {sorted(rooms - set(BELOW) - {'run'})}"
    for folder in (p for p in PIPELINES.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
        assert doc, f"pipelines/{folder.name}/__init__.py has no docstring saying what the room holds"


def test_the_runner_keeps_only_a_runs_life() -> None:
    tree = ast.parse((PIPELINES / "run" / "runner.py").read_text())
    classes = sorted(node.name for node in tree.body if isinstance(node, ast.ClassDef))
    assert classes == ["RunHandle"], f"runner.py defines {classes}: storing, redacting and journalling live in their own modules"


def test_what_a_run_leaves_behind_does_not_import_the_runner() -> None:
    for path in sorted((PIPELINES / "record").glob("*.py")):
        upward = [m for m in imported_modules(path) if m.startswith("pipelines.run")]
        assert not upward, f"{path.name} imports {upward}: the runner uses the record, not the other way round"


def test_the_digest_reads_only_events_and_the_domain_model() -> None:
    """Everything from the store to the page reads runs through the digest, so it sits just above the events (and the verdict
    words, and the text test that tells a turn copied from the opponent's)."""
    inside = sorted(m for m in imported_modules(PIPELINES / "record" / "digest.py") if m.startswith("pipelines."))
    allowed = {"pipelines.events", "pipelines.domain", "pipelines.record.labels", "pipelines.text.echo"}
    assert set(inside) <= allowed, f"digest.py imports {inside}"
    echo = [m for m in imported_modules(PIPELINES / "text" / "echo.py") if m.startswith("pipelines.")]
    assert not echo, f"text/echo.py imports {echo}: it is a leaf"
    labels = [m for m in imported_modules(PIPELINES / "record" / "labels.py") if m.startswith("pipelines.") and m != "pipelines.domain"]
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
        if path != PIPELINES / "database" / "tables.py" and "DeskTable" in path.read_text()
    )
    assert not declaring, f"{declaring} declare tables outside pipelines/database/tables.py"
