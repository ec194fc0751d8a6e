"""How protocols are found by name: the registry of debate methods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pipelines.domain import Verdict
from pipelines.errors import UnknownProtocolError
from pipelines.run.context import RunContext

ProtocolFn = Callable[[RunContext], Awaitable[Verdict]]


@dataclass(frozen=True)
class Protocol:
    """A registered debate method: its entry point and what the UI says about it."""

    name: str
    run: ProtocolFn
    title: str
    description: str
    labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    probability_roles: tuple[str, ...] = ()  # roles whose answers are read from token probabilities (the embedded server then keeps them)


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


def protocol_names() -> list[str]:
    from pipelines import protocols  # noqa: F401

    return list(PROTOCOLS)
