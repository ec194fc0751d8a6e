"""``python -m pipelines.record.migrations new "what it adds"``: write the next migration from the store's tables."""

from __future__ import annotations

import sys

from pipelines.record.migrations import new_revision
from pipelines.record.store import schema

if len(sys.argv) != 3 or sys.argv[1] != "new":
    sys.exit('usage: python -m pipelines.record.migrations new "what it adds"')
path = new_revision(sys.argv[2], schema())
print(f"wrote {path}: read it, name what it does in its docstring, and run `ruff format` on it")
