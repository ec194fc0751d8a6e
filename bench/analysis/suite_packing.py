"""How `make test`'s files pack onto its workers: in collection order against longest first, from one run's JUnit report.

    .venv/bin/python bench/analysis/suite_packing.py REPORT.xml [--workers 2] [--order tests/conftest.py]

`make test` keeps each test file on one worker (pytest-xdist's ``--dist loadfile``) and hands the next file to whichever
worker is free. The wall time of the pytest step is then the time of the busiest worker, which depends on the order the
files are handed out. This replays that rule on the file times of one run (each file's summed test times from a JUnit
report: ``PYTEST_ADDOPTS=--junitxml=REPORT.xml make test``) for three orders: the files sorted by path (pytest's
collection order before ``tests/conftest.py`` reordered it), the order ``LONGEST_FIRST`` of ``tests/conftest.py``
gives, and the ideal longest-first by measured time. Set-up outside the tests (a worker's start, session fixtures
built inside the first test that needs them) is in those tests' times. A replay, not a run: it shows what the order
alone is worth on that run's times.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def file_times(report: Path) -> dict[str, float]:
    """Seconds of each test file in a JUnit report (``classname`` is the file's dotted path, then the class if any)."""
    times: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        dotted = case.get("classname", "")
        parts = dotted.split(".")
        # tests.pipelines.record.test_store (.TestClass): the file is the last part that starts with test_
        ends = max((i for i, part in enumerate(parts) if part.startswith("test_")), default=len(parts) - 1)
        times["/".join(parts[: ends + 1]) + ".py"] += float(case.get("time", 0) or 0)
    return dict(times)


def makespan(order: list[str], times: dict[str, float], workers: int) -> float:
    """The busiest worker's seconds when each file in ``order`` goes to the first worker free."""
    free = [0.0] * workers
    heapq.heapify(free)
    for name in order:
        heapq.heappush(free, heapq.heappop(free) + times[name])
    return max(free)


def conftest_order(names: list[str]) -> list[str]:
    """The files in the order ``tests/conftest.py``'s ``LONGEST_FIRST`` gives them (path order within a rank)."""
    from tests.conftest import LONGEST_FIRST

    def rank(name: str) -> int:
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if name.startswith(prefix)), len(LONGEST_FIRST))

    return sorted(sorted(names), key=rank)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("report", type=Path, help="a JUnit XML report of one `make test` run")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    times = file_times(args.report)
    total = sum(times.values())
    orders = {
        "path order (before)": sorted(times),
        "tests/conftest.py LONGEST_FIRST (now)": conftest_order(list(times)),
        "longest first by measured time (ideal order)": sorted(times, key=lambda n: -times[n]),
    }
    print(f"{len(times)} files, {total:.0f} s of tests; {args.workers} workers: at best {total / args.workers:.0f} s each")
    print("\n| order | busiest worker, s | vs path order |")
    print("| --- | ---: | ---: |")
    before = makespan(orders["path order (before)"], times, args.workers)
    for name, order in orders.items():
        seconds = makespan(order, times, args.workers)
        print(f"| {name} | {seconds:.0f} | {seconds / before:.2f}x |")
    print("\nlongest files:")
    for name in sorted(times, key=lambda n: -times[n])[:10]:
        print(f"  {times[name]:7.1f} s  {name}")


if __name__ == "__main__":
    main()
