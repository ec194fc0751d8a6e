"""When a run's model calls ran, from their (start, end) times: how many at once, the time they covered, the longest chain."""

from __future__ import annotations


def critical_path(intervals: list[tuple[float, float]], slack: float = 0.005, weight: float | None = None) -> float:
    """Longest total weight of a chain of intervals, each starting after the previous one ended (within ``slack``).

    An interval weighs its length, or ``weight`` when given (the model's known time per call).
    """
    ordered = sorted(intervals, key=lambda iv: iv[1])
    best: list[float] = []
    for i, (start, end) in enumerate(ordered):
        before = [best[j] for j in range(i) if ordered[j][1] <= start + slack]
        best.append((end - start if weight is None else weight) + max(before, default=0.0))
    return max(best, default=0.0)


def union_length(intervals: list[tuple[float, float]]) -> float:
    """The time covered by at least one interval."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def peak_in_flight(intervals: list[tuple[float, float]]) -> int:
    """The most intervals open at one time (one ending as another starts counts as one)."""
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda p: (p[0], p[1]))
    peak = current = 0
    for _, step in edges:
        current += step
        peak = max(peak, current)
    return peak
