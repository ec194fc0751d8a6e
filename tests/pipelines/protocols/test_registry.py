"""A protocol is one folder and one entry point: discovered, composed into RunConfig, named nowhere else.

The last test runs docs/architecture.md's "How to add a protocol" on a toy protocol written into a temporary folder
with its entry point registered there (a ``*.dist-info`` beside it, as ``pip install`` leaves one), and sees it run on
the fake backend and appear in the options.
"""

from __future__ import annotations

import ast
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import pipelines.core.config
from pipelines.cli import main as cli_main
from pipelines.core.config import RunConfig, compose_run_config
from pipelines.core.events import StageCompleted, VerdictReached
from pipelines.protocols import base
from pipelines.protocols.base import GROUP, PROTOCOLS, discover, get_protocol, protocol_names, rediscover
from pipelines.run.runner import stream_run
from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.fakes import fake_config, make_services

ROOT = Path(__file__).resolve().parents[3]
APP_CODE = [ROOT / "app.py", ROOT / "server.py", *(ROOT / d for d in ("pipelines", "components", "pages"))]
# a string that happens to be a protocol's name but means something else
NOT_THE_PROTOCOL = {("pipelines/run/desk_settings.py", "desk"): "the newsroom desk's settings row (a stored key), not the protocol"}


def _sources() -> Iterator[Path]:
    for place in APP_CODE:
        yield from (sorted(place.rglob("*.py")) if place.is_dir() else [place])


def test_every_entry_in_pyproject_is_a_discovered_protocol_in_its_own_folder() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][GROUP]
    assert listed and set(listed) <= set(discover())
    for name, value in listed.items():
        assert value == f"pipelines.protocols.{name}:PROTOCOL", "a protocol's declaration is its folder's PROTOCOL"
        folder = ROOT / "pipelines" / "protocols" / name
        assert all((folder / f).exists() for f in ("run.py", "settings.py", "protocol.toml")), (
            f"{name}: its run, settings and what it says of itself"
        )
        protocol = get_protocol(name)
        assert protocol.settings is not None and name in RunConfig.model_fields, f"{name}: its settings are RunConfig's section {name}"
        assert RunConfig.model_fields[name].annotation is protocol.settings.model
        assert callable(protocol.runner())


def test_no_file_outside_a_protocols_folder_names_it() -> None:
    names = set(protocol_names())
    found = []
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        parts = path.relative_to(ROOT).parts
        own = parts[2] if parts[:2] == ("pipelines", "protocols") and len(parts) > 3 else None
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.value if isinstance(node, ast.Constant) else node.attr if isinstance(node, ast.Attribute) else None
            named = isinstance(name, str) and name in names and name != own  # "toolmad", or config.toolmad
            if named and (relative, name) not in NOT_THE_PROTOCOL:
                found.append(f"{relative}:{node.lineno} names {name!r}")
    assert not found, "ask the protocol's declaration (pipelines/protocols/base.py) instead:\n" + "\n".join(found)


def test_the_check_finds_a_protocol_named_outside_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stray = tmp_path / "pipelines" / "stray.py"
    stray.parent.mkdir()
    stray.write_text('GROUNDABLE = ("toolmad", "radar")\nREADER = config.desk.reader\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "APP_CODE", [tmp_path / "pipelines"])
    with pytest.raises(AssertionError, match="stray.py:1 names 'toolmad'") as caught:
        test_no_file_outside_a_protocols_folder_names_it()
    assert "stray.py:2 names 'desk'" in str(caught.value), "by attribute too"


TOY = {
    "__init__.py": '''
        """`toy`: a protocol written by the test, as docs/architecture.md says to."""

        from pipelines.protocols.base import declare
        from toy.settings import ToyConfig

        PROTOCOL = declare(__name__, ToyConfig)
    ''',
    "protocol.toml": """
        title = "Toy"
        description = "One search, the best passage's words as the answer."
        settings = "Settings of the toy protocol."
        ruled_beside = false

        [decided_by]
        toy = "the toy said"

        [card]
        how_decided = "The toy read one passage."
    """,
    "settings.py": '''
        from pydantic import Field

        from pipelines.protocols.base import ProtocolSettings


        class ToyConfig(ProtocolSettings):
            """`toy`: one search."""

            passages: int = Field(default=2, ge=1, le=5, title="Passages")
            """How many passages the toy reads."""
    ''',
    "run.py": """
        from pipelines.core.domain import Verdict
        from pipelines.core.events import StageCompleted, StageStarted
        from pipelines.run.context import RunContext
        from pipelines.stages.retrieval import retrieve


        async def run_toy(ctx: RunContext) -> Verdict:
            ctx.emit(StageStarted(stage="toy", detail="searching"))
            found = await retrieve(ctx, agent="Toy", round=1, query=ctx.claim.text, tool="corpus", k=ctx.config.toy.passages)
            ctx.emit(StageCompleted(stage="toy", detail=f"{len(found)} passages"))
            return Verdict(label="NOT ENOUGH INFO", rationale="a toy", cited=[e.id for e in found[:1]], decided_by="toy", stop_reason="one look")
    """,
}


@pytest.fixture
def toy_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[RunConfig]]:
    """The toy's folder and its entry point in a temporary folder on the path; RunConfig composed again with it."""
    package = tmp_path / "toy"
    package.mkdir()
    for name, text in TOY.items():
        (package / name).write_text(textwrap.dedent(text).lstrip())
    info = tmp_path / "toyproto-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyproto\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ntoy = toy:PROTOCOL\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = dict(PROTOCOLS)
    rediscover()
    composed = compose_run_config()
    monkeypatch.setattr(pipelines.core.config, "RunConfig", composed)
    monkeypatch.setattr(cli_main, "RunConfig", composed)
    yield composed
    PROTOCOLS.clear()
    PROTOCOLS.update(before)
    base._discovered[:] = [True]
    for module in [m for m in sys.modules if m == "toy" or m.startswith("toy.")]:
        del sys.modules[module]


def test_a_new_protocol_is_a_folder_and_an_entry(toy_protocol: type[RunConfig], demo_data_dir: Path, embedder: MiniLMEmbedder) -> None:
    assert "toy" in protocol_names() and "toy" in toy_protocol.model_fields
    assert get_protocol("toy").card.how_decided == "The toy read one passage." and not get_protocol("toy").ruled_beside
    options = cli_main.options_table()
    assert "| `toy.passages` | `DEBATEDESK_TOY__PASSAGES` | `2` | How many passages the toy reads. |" in options
    config = toy_protocol.model_validate(fake_config(protocol="toy").model_dump() | {"toy": {"passages": 3}})
    events = list(stream_run("Masks reduce transmission of respiratory viruses", config, make_services(demo_data_dir, embedder)))
    assert any(isinstance(e, StageCompleted) and e.stage == "toy" and e.detail == "3 passages" for e in events)
    verdicts = [e for e in events if isinstance(e, VerdictReached)]
    assert [v.verdict.decided_by for v in verdicts] == ["toy"], "the toy ran end to end on the fake backend"
