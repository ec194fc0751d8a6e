"""The benches' JSON-lines files read one way: run records (``--records``), readings, claim lists; gzipped when named ``.gz``.

A bench that is killed while it writes leaves its last line cut short, and one that resumes appends after it, so a
broken line can stand anywhere in a file that is still good. Such lines are left out and counted on stderr, naming the
file, so a table is never silently short of claims.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any


def read_json_lines(path: Path, *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """Every object in the file, in order; blank lines passed over. With ``missing_ok`` a file not written yet reads as none."""
    if missing_ok and not path.is_file():
        return []
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    rows, broken = [], 0
    for line in raw.decode("utf-8").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            broken += 1
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            broken += 1
    if broken:
        print(f"{path}: {broken} line(s) left out, not a JSON object (cut short by a killed run?)", file=sys.stderr)
    return rows
