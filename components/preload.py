"""What the web server imports before its first page, and why the garbage collector then leaves it alone.

Streamlit collects every generation after each script run (``runner.postScriptGC``), so a session's garbage goes at
once. With chromadb, LangChain, pandas and plotly loaded, that scan walked about 350,000 objects, nearly all of them
modules' functions, classes and constants that live as long as the process: 0.2-0.4 s of the server's CPU after every
click (docs/measurements/2026-12-03-browser-suite.md). ``server.py`` calls ``preload`` once, at start, before any
session: every module of ``components`` (and so the ``pipelines`` modules the pages use) and the libraries they import
only when first needed are imported, the heap is collected, and what is left is frozen (``gc.freeze``), so later scans
skip it. A frozen object is still freed when its last reference goes; nothing a session makes is frozen. The imports
would have come with the first page anyway: they come before it instead.
"""

from __future__ import annotations

import gc
import importlib
import logging
import pkgutil

import components

log = logging.getLogger("debatedesk.preload")

# Imported inside functions, on first use, by what the default app runs (the index, the embedder, web search): imported
# here so their objects are frozen with the rest. torch is not: only DEBATEDESK_EMBEDDINGS=torch loads it.
LIBRARIES = ("chromadb", "onnxruntime", "tokenizers", "ddgs")


def preload() -> int:
    """Import the app's page code and the libraries it uses, collect, freeze; the number of objects frozen."""
    for module in pkgutil.iter_modules(components.__path__, "components."):
        importlib.import_module(module.name)
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # an optional library this install lacks: the page that needs it says so itself
            log.info("not preloaded: %s (%s)", name, exc)
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
