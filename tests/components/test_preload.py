"""The server's preload: the page code imported before the first page, and the heap frozen so Streamlit's collection
after each run (``runner.postScriptGC``) no longer walks it. Run in a process of its own: freezing this one would keep
every later test's garbage cycles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.environment import settings_free_environment

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys, time
from components.preload import preload
frozen = preload()
garbage = [[object()] for _ in range(1000)]  # what a session makes after the start: still collected
for item in garbage:
    item.append(item)  # a reference cycle each
del garbage, item
started = time.perf_counter()
collected = gc.collect()
print(json.dumps({"frozen": frozen, "tracked": len(gc.get_objects()), "collected": collected,
                  "seconds": time.perf_counter() - started, "modules": sorted(sys.modules)}))
"""


def test_the_server_start_imports_the_pages_code_and_freezes_it_so_a_collection_skips_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=settings_free_environment(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"components.live_run", "components.transcript", "pipelines.run.runner", "chromadb", "onnxruntime"} <= set(seen["modules"])
    assert seen["frozen"] > 100_000  # the libraries' and the app's modules: a few hundred thousand objects
    assert seen["tracked"] < seen["frozen"] / 20  # a later collection walks a small part of the heap
    assert seen["collected"] >= 1000  # and still frees the cycles made after the start
    assert "torch" not in seen["modules"]  # the default app never loads it; preloading it would cost memory for nothing
