"""What the stance module says of itself matches the config it documents."""

from __future__ import annotations

import re
from typing import get_args

from pipelines.protocols.desk.settings import DeskConfig, StanceReader
from pipelines.stages import stance


def test_the_docstring_names_the_configured_default_reader() -> None:
    """The module's prose about "the default" names desk's default reader first, not one it used to have."""
    doc = stance.__doc__ or ""
    readers = set(get_args(StanceReader))
    said = [s for s in re.split(r"(?<=[.:])\s+", " ".join(doc.split())) if "default" in s]
    assert said, "the docstring says which reader is the default"
    for sentence in said:
        named = [name for name in re.findall(r"``(\w+)``", sentence) if name in readers]
        if named:
            assert named[0] == DeskConfig().reader, sentence
