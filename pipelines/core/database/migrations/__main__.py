"""``python -m pipelines.core.database.migrations new "what it adds"``: write the next migration from the desk's tables."""

from __future__ import annotations

import sys

from pipelines.core.database.migrations import new_revision
from pipelines.core.database.tables import desk_schema

if len(sys.argv) != 3 or sys.argv[1] != "new":
    sys.exit('usage: python -m pipelines.core.database.migrations new "what it adds"')
path = new_revision(sys.argv[2], desk_schema())
print(f"wrote {path}: read it, name what it does in its docstring, and run `ruff format` on it")
