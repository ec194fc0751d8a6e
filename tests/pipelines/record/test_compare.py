"""Any two runs side by side: verdicts, the exhibits both found and each alone, the arguments, cost."""

from __future__ import annotations

from pipelines.events import Event
from pipelines.record.compare import compare_runs
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config


def run(services: Services, claim: str, protocol: str) -> list[Event]:
    return list(stream_run(claim, fake_config(protocol=protocol), services))


def test_two_wordings_of_a_claim_share_the_exhibits_both_found(services: Services) -> None:
    left = run(services, "Masks reduce transmission of respiratory viruses", "single")
    right = run(services, "Wearing masks cuts the spread of respiratory viruses", "toolmad")
    comparison = compare_runs(left, right)
    assert not comparison.same_claim
    assert comparison.left.protocol == "single" and comparison.right.protocol == "toolmad"
    assert comparison.shared, "both searches find some of the same mask passages"
    left_ids = {s.left_id for s in comparison.shared} | {e.id for e in comparison.left_only}
    right_ids = {s.right_id for s in comparison.shared} | {e.id for e in comparison.right_only}
    assert len(left_ids) == len(comparison.shared) + len(comparison.left_only), "every item of the first run is placed once"
    assert len(right_ids) == len(comparison.shared) + len(comparison.right_only), "every item of the second run is placed once"
    assert comparison.right.turns, "toolmad's debaters argued"
    assert comparison.left.label in {"SUPPORTED", "REFUTED", "NOT ENOUGH INFO"}
    assert comparison.left.cost.calls > 0 and comparison.right.cost.calls > comparison.left.cost.calls


def test_a_run_compared_with_itself_shares_everything(services: Services) -> None:
    events = run(services, "Vaccines cause autism", "single")
    comparison = compare_runs(events, events)
    assert comparison.agree and comparison.same_claim
    assert not comparison.left_only and not comparison.right_only
    assert all(s.left_id == s.right_id for s in comparison.shared)
