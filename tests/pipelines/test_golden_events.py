"""Behaviour kept: every protocol on the fake backend gives the same events as the stored golden streams.

Refactors must not change what a run emits. The golden file holds each protocol's events on
two claims (fake backend, demo corpus, web off, no response cache, a fresh data folder so no
evidence memory carries over), with what varies from run to run left out: times, seconds,
run ids, the config snapshot (``bench/fake_events.py`` normalises them). A change that means
to alter the events regenerates it: ``DEBATEDESK_REGOLDEN=1 .venv/bin/python -m pytest
tests/pipelines/test_golden_events.py``, and the diff of the unpacked file shows what changed.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from bench.fake_events import CLAIMS, compare, fingerprint_runs
from pipelines.tools.embeddings import MiniLMEmbedder
from tests.fakes import make_services

GOLDEN = Path(__file__).parent / "golden" / "fake_events.jsonl.gz"


def _write(rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    GOLDEN.write_bytes(gzip.compress(text.encode(), mtime=0))


def test_every_protocol_emits_the_golden_events(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    services = make_services(tmp_path, embedder)
    services.ensure_corpus("demo")
    rows = fingerprint_runs(services, CLAIMS[:2])
    if os.environ.get("DEBATEDESK_REGOLDEN"):
        _write(rows)
    golden = [json.loads(line) for line in gzip.decompress(GOLDEN.read_bytes()).decode().splitlines()]
    problems = compare(golden, rows)
    assert not problems, "\n".join(problems)
