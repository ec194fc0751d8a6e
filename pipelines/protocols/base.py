"""The registry of debate methods: each protocol is a folder under ``pipelines/protocols/`` that declares itself here.

A protocol's folder holds its run (``run.py``), its settings class (``settings.py``), its own prompts (``prompts/``),
its fake responders (``fake.py``), what it tells the rest of the desk (``protocol.toml``) and, in its ``__init__.py``,
its one ``PROTOCOL`` (a :class:`Protocol`, built from them by :func:`declare`). The project lists each one in pyproject.toml's entry-point group
``debatedesk.protocols`` (``name = "pipelines.protocols.NAME:PROTOCOL"``), and this module finds them there, as
simonw/llm finds its plugins. Everything the rest of the code asks of a protocol is a field of its declaration:
nothing outside its folder names it. A declaration imports only its settings (pydantic), never its run: the config
composes ``RunConfig`` from these declarations, so loading one must not import anything that needs the config.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pipelines.core.errors import UnknownProtocolError

GROUP = "debatedesk.protocols"  # the entry-point group every protocol is listed in
DISTRIBUTION = "debatedesk"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
ProtocolFn = Callable[[Any], Awaitable[Any]]  # (RunContext) -> Verdict; typed loosely so declarations import nothing above the config


@dataclass(frozen=True)
class CardFacts:
    """What the verdict card says of a protocol: how a verdict is reached in plain words (per ``decided_by`` where that
    changes it), where its confidence comes from, or why it states none."""

    how_decided: str = ""
    how_decided_by: Mapping[str, str] = field(default_factory=dict)
    confidence_source: str = "as the protocol computed it"
    unsettled_confidence_source: str = ""  # where a NOT ENOUGH INFO verdict's confidence comes from, where that is another number
    no_confidence: str = "this protocol's verdict is a label a model wrote, with no probability or vote behind it."
    quotes_model: bool = True  # the card quotes the model's own words of the ruling (desk's are its weighing, said already)
    debate_note: str = ""  # said when its run held a debate stage (desk debates only where strong exhibits conflict)
    # said when it counts on the web and the web could not be searched: for every web query ("without_web"), or for
    # some ("web_partly", with {failed} and {searched} filled in)
    without_web: str = ""
    web_partly: str = ""

    def how(self, decided_by: str) -> str:
        """How a verdict decided by ``decided_by`` was reached."""
        return self.how_decided_by.get(decided_by, self.how_decided)


class ProtocolSettings(BaseModel):
    """The base of a protocol's settings class: each field's description (the sidebar's help, docs/options.md) is the
    docstring under it."""

    model_config = ConfigDict(use_attribute_docstrings=True)


@dataclass(frozen=True)
class Settings:
    """A protocol's section of ``RunConfig``: its settings class, and the title and description the sidebar, CLI and docs show."""

    model: type[BaseModel]
    description: str


@dataclass(frozen=True)
class Protocol:
    """A registered debate method: its entry point, what the UI says about it, and what the runner, grounding, scoring,
    the verdict card and the belief chart ask of it."""

    name: str
    run: ProtocolFn | str  # the coroutine, or "module:function" (imported on first use, so a declaration stays light)
    title: str
    description: str
    labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    probability_roles: tuple[str, ...] = ()  # roles whose answers are read from token probabilities (the embedded server then keeps them)
    card: CardFacts = field(default_factory=lambda: CardFacts())  # what the verdict card says of it
    settings: Settings | None = None  # its section of RunConfig, named after it
    gathers_evidence: bool = False  # its debate searches: it can start from desk's exhibits (grounding)
    ruled_beside: bool = True  # the calibrated reading of its evidence is given beside its own ruling (grounding)
    scored_answers: bool = False  # its debaters' answers are scored for faithfulness and answer relevance (stages/scoring)
    decided_by: Mapping[str, str] = field(default_factory=dict)  # its decided_by values -> how the card says who ruled
    fake: str = ""  # the module of its fake responders ("" when the shared ones answer it)
    default: bool = False  # the protocol a new run takes (one declares it)
    benchmark: bool = False  # picked by default on the benchmark page
    reads_exhibits: bool = False  # its settings section says how exhibits are read (stages/exhibit_reading, grounding, calibration)

    def runner(self) -> ProtocolFn:
        """The protocol's coroutine (imported now when declared as "module:function")."""
        if callable(self.run):
            return self.run
        module, _, name = self.run.partition(":")
        fn = getattr(importlib.import_module(module), name)
        assert callable(fn), self.run
        return fn  # type: ignore[no-any-return]


def declare(package: str, settings: type[BaseModel]) -> Protocol:
    """The declaration of the protocol in ``package`` (its folder): what its ``protocol.toml`` says of it, its run
    ``run.py``'s ``run_NAME``, its fake responders ``fake.py`` where it has one, and ``settings`` as its section of RunConfig."""
    folder = resources.files(package)
    name = package.rsplit(".", 1)[-1]
    told = tomllib.loads(folder.joinpath("protocol.toml").read_text(encoding="utf-8"))
    card = told.pop("card", {})
    said: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value for key, value in told.items()}
    return Protocol(
        name=name,
        run=f"{package}.run:run_{name}",
        settings=Settings(settings, said.pop("settings")),
        card=CardFacts(**card),
        fake=f"{package}.fake" if folder.joinpath("fake.py").is_file() else "",
        **said,
    )


PROTOCOLS: dict[str, Protocol] = {}
_discovered: list[bool] = []


def register_protocol(protocol: Protocol) -> Protocol:
    PROTOCOLS[protocol.name] = protocol
    return protocol


def declared_entry_points() -> list[metadata.EntryPoint]:
    """The group's entry points: those of every installed distribution, and this checkout's own from pyproject.toml
    when the project is not installed (a fresh clone run in place; ``make setup`` installs it in editable mode)."""
    found = list(metadata.entry_points(group=GROUP))
    try:
        metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        listed = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"][GROUP]
        known = {ep.name for ep in found}
        found += [metadata.EntryPoint(name, value, GROUP) for name, value in listed.items() if name not in known]
    return found


def discover() -> dict[str, Protocol]:
    """Every declared protocol, loaded once (sorted by name, so the sidebar's order does not depend on install order)."""
    if not _discovered:
        _discovered.append(True)
        for ep in sorted(declared_entry_points(), key=lambda e: e.name):
            protocol = ep.load()
            if not isinstance(protocol, Protocol) or protocol.name != ep.name:
                raise TypeError(f"entry point {ep.name} = {ep.value} is not the Protocol named {ep.name}")
            PROTOCOLS.setdefault(protocol.name, protocol)
    return PROTOCOLS


def rediscover() -> dict[str, Protocol]:
    """Discover again (a test that registered a new entry point)."""
    _discovered.clear()
    return discover()


def get_protocol(name: str) -> Protocol:
    """The protocol called ``name``; an unknown name lists the valid ones."""
    try:
        return discover()[name]
    except KeyError:
        raise UnknownProtocolError(name, list(PROTOCOLS)) from None


def find_protocol(name: str) -> Protocol | None:
    """The protocol called ``name``, or None (a record imported from a desk with protocols this one lacks)."""
    return discover().get(name)


def protocol_names() -> list[str]:
    return list(discover())


def protocols_where(flag: Callable[[Protocol], bool]) -> tuple[str, ...]:
    """The names of the protocols a declaration says ``flag`` of (e.g. those that gather evidence)."""
    return tuple(name for name, p in discover().items() if flag(p))


def exhibit_reader() -> str:
    """The protocol whose settings say how exhibits are read (its declaration's ``reads_exhibits``): the one calibrations are for."""
    (name,) = protocols_where(lambda p: p.reads_exhibits)
    return name


def load_fake_responders() -> None:
    """Import each protocol's fake responders (they register themselves with the fake backend)."""
    for protocol in discover().values():
        if protocol.fake:
            importlib.import_module(protocol.fake)
