"""JSON Lines read with messages a user can act on: corpora, batch files and datasets all come this way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def jsonl_objects(
    text: str, where: str, error: type[Exception], *, expected: str = "a JSON object", hint: str = "one JSON object per line"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line raises ``error`` naming the file and the line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where} line {number}: not valid JSON ({exc.msg}); {hint}") from exc
        if not isinstance(row, dict):
            raise error(f"{where} line {number}: expected {expected}")
        yield number, row
