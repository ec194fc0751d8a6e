"""The overhead benchmark's critical path: chains read from the calls' intervals, weighed by model time or by the intervals."""

import pytest

from pipelines.record.timeline import critical_path, peak_in_flight, union_length

# Two calls at once (0-0.6 s and 0-0.5 s), then one after both (0.62-1.3 s: its last 0.18 s were chunk handling).
CALLS = [(0.0, 0.6), (0.0, 0.5), (0.62, 1.3)]


def test_the_critical_path_weighs_each_call_by_the_models_time_when_it_is_known() -> None:
    assert critical_path(CALLS, weight=0.5) == pytest.approx(1.0)  # two calls in a chain, 0.5 s of model time each
    assert critical_path(CALLS) == pytest.approx(1.28)  # the recorded intervals count the chunk handling as model time


def test_calls_that_overlap_are_not_a_chain() -> None:
    assert critical_path([(0.0, 0.5), (0.1, 0.6), (0.2, 0.7)], weight=0.5) == pytest.approx(0.5)
    assert critical_path([], weight=0.5) == 0.0


def test_busy_time_and_peak() -> None:
    assert union_length(CALLS) == pytest.approx(0.6 + 0.68)
    assert peak_in_flight(CALLS) == 2
