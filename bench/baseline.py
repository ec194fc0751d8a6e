"""The corpus search as it was at a git commit, loaded beside the current one, so a benchmark times both in one run.

``baseline_module("main")`` reads ``pipelines/run/tools/corpus_index.py`` and
``pipelines/run/tools/lexical.py`` at that commit (``git show``) and executes them as modules of
their own (the old corpus index bound to the old lexical index); everything else they import
is today's. Its ``CorpusIndex`` opens the same data folder as the current one, so both search
the same Chroma collection and BM25 files, on the same queries, under the same load.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = {"lexical": "pipelines/run/tools/lexical.py", "corpus_index": "pipelines/run/tools/corpus_index.py"}


def baseline_module(ref: str) -> types.ModuleType:
    """The corpus_index module at ``ref`` (a commit, branch or tag), with the lexical module of the same commit."""
    lexical = _load(ref, "lexical")
    saved = sys.modules.get("pipelines.run.tools.lexical")
    sys.modules["pipelines.run.tools.lexical"] = lexical  # the old corpus_index imports the old LexicalIndex
    try:
        return _load(ref, "corpus_index")
    finally:
        if saved is not None:
            sys.modules["pipelines.run.tools.lexical"] = saved


def same_hits(a: list[Any], b: list[Any]) -> bool:
    """The same passages (id, text, metadata) in the same order with the same scores (hits of either module)."""
    return [(h.passage, h.score, h.scores) for h in a] == [(h.passage, h.score, h.scores) for h in b]


def _load(ref: str, name: str) -> types.ModuleType:
    path = FILES[name]
    try:
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"cannot read {path} at {ref!r}: {exc.stderr.strip()}") from exc
    module = types.ModuleType(f"baseline_{name}")
    module.__file__ = f"{ref}:{path}"
    sys.modules[module.__name__] = module  # dataclasses look their module up by name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module
