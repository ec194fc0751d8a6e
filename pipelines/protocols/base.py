"""How protocols are found by name: the registry of debate methods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from pipelines.domain import Verdict
from pipelines.errors import UnknownProtocolError
from pipelines.run.context import RunContext

ProtocolFn = Callable[[RunContext], Awaitable[Verdict]]


@dataclass(frozen=True)
class CardFacts:
    """What the verdict card says of a protocol: how a verdict is reached in plain words (per ``decided_by`` where that
    changes it), where its confidence comes from, or why it states none."""

    how_decided: str = ""
    how_decided_by: Mapping[str, str] = field(default_factory=dict)
    confidence_source: str = "as the protocol computed it"
    no_confidence: str = "this protocol's verdict is a label a model wrote, with no probability or vote behind it."

    def how(self, decided_by: str) -> str:
        """How a verdict decided by ``decided_by`` was reached."""
        return self.how_decided_by.get(decided_by, self.how_decided)


@dataclass(frozen=True)
class Protocol:
    """A registered debate method: its entry point and what the UI says about it."""

    name: str
    run: ProtocolFn
    title: str
    description: str
    labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    probability_roles: tuple[str, ...] = ()  # roles whose answers are read from token probabilities (the embedded server then keeps them)
    card: CardFacts = field(default_factory=lambda: CardFacts())  # what the verdict card says of it


PROTOCOLS: dict[str, Protocol] = {}


def register_protocol(protocol: Protocol) -> Protocol:
    PROTOCOLS[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    """The protocol called ``name``; an unknown name lists the valid ones."""
    from pipelines import protocols  # noqa: F401  (registers the built-in protocols)

    try:
        return PROTOCOLS[name]
    except KeyError:
        raise UnknownProtocolError(name, list(PROTOCOLS)) from None


def find_protocol(name: str) -> Protocol | None:
    """The protocol called ``name``, or None (a record imported from a desk with protocols this one lacks)."""
    from pipelines import protocols  # noqa: F401

    return PROTOCOLS.get(name)


def protocol_names() -> list[str]:
    from pipelines import protocols  # noqa: F401

    return list(PROTOCOLS)
