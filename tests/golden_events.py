"""Do the same fake runs give the same events? A fingerprint of every protocol's events, to compare two trees.

    .venv/bin/python -m tests.golden_events --out /tmp/after.jsonl [--claims 3] [--data-dir DIR]
    .venv/bin/python -m tests.golden_events --out /tmp/after.jsonl --compare /tmp/before.jsonl

Runs every registered protocol on the ``fake`` backend (demo corpus, web search off, response
cache off, no run store) over the same claims, and writes one JSON line per event with what
varies from run to run left out (the time an event happened, a call's seconds, the run id and
the config snapshot); floats are rounded to 6 places. With ``--compare`` it prints the first
difference per protocol and claim, and exits with 1 when any run differs. Two runs whose
events are the same but interleaved differently (concurrent branches, as toolmad's two
debaters) count as the same. Refactors that must
not change behaviour run it on the tree before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import dump_event
from pipelines.protocols.base import protocol_names
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import default_embedder

CLAIMS = (
    "Masks reduce transmission of respiratory viruses",
    "Vaccines cause autism",
    "The Moon landings were staged",
)
VOLATILE = frozenset({"at", "seconds", "run_id", "config", "wall_s", "model_s"})


def _stable(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def fingerprint(data_dir: Path, claims: int) -> list[dict[str, Any]]:
    # passages on float weights: int8 kernels differ by CPU (tests/pipelines/test_golden_events.py)
    settings = AppSettings(data_dir=data_dir, passage_precision="float32")
    services = Services.create(settings, embedder=default_embedder(), with_store=False)
    services.response_cache = None
    return fingerprint_runs(services, CLAIMS[:claims])


def fingerprint_runs(services: Any, claims: Sequence[str], protocols: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Every protocol (or those named) on each claim, on the fake backend with the web off: one row per event, volatile fields left out."""
    rows: list[dict[str, Any]] = []
    for protocol in sorted(protocols or protocol_names()):
        config = RunConfig().with_backend("fake").model_copy(update={"corpus": "demo", "protocol": protocol})
        config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": False})})
        for number, claim in enumerate(claims):
            for index, event in enumerate(stream_run(claim, config, services, run_id=f"fp-{protocol}-{number}")):
                rows.append({"protocol": protocol, "claim": number, "index": index, "event": _stable(dump_event(event))})
    return rows


FLOAT_TOLERANCE = 1e-4  # float kernels round differently by CPU (AVX2 against AVX-512); a real change moves more than this


def _close(a: Any, b: Any, tolerance: float) -> bool:
    """The same event, but for floats that differ by no more than ``tolerance`` (booleans and whole numbers compared exactly)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and abs(a - b) <= tolerance
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_run(a: list[dict[str, Any]], b: list[dict[str, Any]], tolerance: float) -> bool:
    """The same events, in any order: concurrent branches (asyncio.gather, as toolmad's two debaters) interleave either way.

    Each event of ``a`` takes the first unmatched one of ``b`` that is ``_close`` to it (in order, that is the next one)."""
    if len(a) != len(b):
        return False
    unmatched = list(b)
    for event in a:
        match = next((i for i, other in enumerate(unmatched) if _close(event, other, tolerance)), None)
        if match is None:
            return False
        unmatched.pop(match)
    return True


def compare(before: list[dict[str, Any]], after: list[dict[str, Any]], tolerance: float = 0.0) -> list[str]:
    def runs(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
        grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for row in rows:
            grouped.setdefault((row["protocol"], row["claim"]), []).append(row["event"])
        return grouped

    old, new = runs(before), runs(after)
    problems = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, []), new.get(key, [])
        if a == b or _same_run(a, b, tolerance):
            continue
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if not _close(x, y, tolerance)), min(len(a), len(b)))
        problems.append(
            f"{key[0]} claim {key[1]}: {len(a)} events before, {len(b)} after; first difference at event {first}:\n"
            f"  before: {a[first] if first < len(a) else '-'}\n  after:  {b[first] if first < len(b) else '-'}"
        )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="a fingerprint written by another tree")
    parser.add_argument("--claims", type=int, default=len(CLAIMS))
    parser.add_argument("--data-dir", type=Path, help="index folder (default: a fresh temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = fingerprint(args.data_dir or Path(tmp), args.claims)
    args.out.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
    runs = {(r["protocol"], r["claim"]) for r in rows}
    print(f"{len(rows)} events from {len(runs)} runs -> {args.out}")
    if args.compare is None:
        return 0
    before = [json.loads(line) for line in args.compare.read_text().splitlines() if line.strip()]
    problems = compare(before, rows)
    for problem in problems:
        print(problem)
    print("same events in every run" if not problems else f"{len(problems)} of {len(runs)} runs differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
