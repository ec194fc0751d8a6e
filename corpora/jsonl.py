"""JSON Lines read with messages a user can act on: corpora, batch files and datasets all come this way."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_JSON_DEPTH = 64  # the deepest nesting any file of ours needs is under 10; Python's parser gives up near 1,000


class JsonTooDeepError(ValueError):
    """JSON nested deeper than the limit; the message names the file and the limit."""


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def json_depth(text: str | bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (strings skipped), counted without recursion."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    depth = deepest = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


def load_json(text: str | bytes, where: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth``, naming ``where`` and the limit.

    Raises ``JsonTooDeepError`` for deep nesting (a RecursionError deep in the parser, or later in
    validation or rendering, otherwise) and ``json.JSONDecodeError`` for invalid JSON.
    """
    depth = json_depth(text)
    if depth > max_depth:
        raise JsonTooDeepError(f"{where}: JSON nested {depth} levels deep; the limit is {max_depth}")
    try:
        return json.loads(text)
    except RecursionError:  # the scan above should have refused it first
        raise JsonTooDeepError(f"{where}: JSON nested too deeply; the limit is {max_depth}") from None


def jsonl_objects(
    text: str, where: str, error: type[Exception], *, expected: str = "a JSON object", hint: str = "one JSON object per line"
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line raises ``error`` naming the file and the line.

    Lines end at "\n" only (JSON Lines' rule): ``str.splitlines`` would also split inside a string
    holding U+2028, U+0085 or a form feed, which JSON allows unescaped. Nesting deeper than
    ``MAX_JSON_DEPTH`` is refused with the line and the limit, not a RecursionError.
    """
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            row = load_json(line, f"{where} line {number}")
        except JsonTooDeepError as exc:
            raise error(str(exc)) from None
        except json.JSONDecodeError as exc:
            raise error(f"{where} line {number}: not valid JSON ({exc.msg}); {hint}") from exc
        if not isinstance(row, dict):
            raise error(f"{where} line {number}: expected {expected}")
        yield number, row
