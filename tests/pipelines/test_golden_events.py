"""Behaviour kept: every protocol on the fake backend gives the same events as the stored golden streams.

Refactors must not change what a run emits. The golden file holds each protocol's events on
two claims (fake backend, demo corpus, web off, no response cache, a fresh data folder so no
evidence memory carries over, passages on MiniLM's float weights), with what varies from run to run left out: times, seconds,
run ids, the config snapshot (``tests/golden_events.py`` normalises them). A change that means
to alter the events regenerates it: ``DEBATEDESK_REGOLDEN=1 .venv/bin/python -m pytest
tests/pipelines/test_golden_events.py``, and its diff shows what changed.

Passages are embedded on the float weights here, not the app's default int8 ones: ONNX Runtime's int8 kernels give
other numbers on other CPUs (on an AMD EPYC with AVX2 and no VNNI, cosines moved by up to 0.026 from those of the Xeon
the file was made on, and low-ranked passages swapped places), so an int8 golden file holds on one kind of machine only.
Floats are compared to within ``FLOAT_TOLERANCE``, for the float kernels' own rounding by CPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pipelines.run.tools.embeddings import MiniLMEmbedder
from tests.fakes import make_services
from tests.golden_events import CLAIMS, FLOAT_TOLERANCE, compare, fingerprint_runs

GOLDEN = Path(__file__).parent / "golden" / "fake_events.jsonl"


def _write(rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    GOLDEN.write_text(text)


def test_every_protocol_emits_the_golden_events(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    services = make_services(tmp_path, embedder, passage_precision="float32")
    services.ensure_corpus("demo")
    rows = fingerprint_runs(services, CLAIMS[:2])
    if os.environ.get("DEBATEDESK_REGOLDEN"):
        _write(rows)
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    problems = compare(golden, rows, FLOAT_TOLERANCE)
    assert not problems, "\n".join(problems)
