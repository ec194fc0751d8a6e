"""Rows read back as the dataclasses the code passes around: a field and its column share a name, so only the fields
stored in another form (JSON, a nested value, a NULL read as a default) are spelt out where a row is read."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def from_columns(cls: type[T], row: object, **converted: Any) -> T:
    """A ``cls`` whose fields are the row's columns of the same names; ``converted`` gives the fields stored otherwise."""
    same = {f.name: getattr(row, f.name) for f in fields(cls) if f.name not in converted}
    return cls(**same, **converted)
