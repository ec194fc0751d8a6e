"""Debates only where they can change something (belief.debate_when): a grounded debate whose exhibits settle the claim is not run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pipelines.calibration.files import Calibration
from pipelines.calibration.ground import MEASURED, reading_ground
from pipelines.core.config import RunConfig
from pipelines.core.domain import Evidence
from pipelines.core.events import Event, RoundStarted, StageCompleted, TurnCompleted, VerdictAggregated, VerdictReached
from pipelines.record.digest import digest
from pipelines.record.verdict_card import verdict_card
from pipelines.run.runner import debate_anyway, stream_run
from pipelines.stages.exhibit_reading import SETTLED, UNCONTESTED, Reading, why_settled, why_uncontested
from pipelines.stages.stance import Stance
from pipelines.stages.stance_aggregation import Bounds, aggregate
from tests.fakes import SETTLING, calibrate_fake, fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"  # the demo's top exhibits agree with it
SURE = SETTLING
UNDECIDED = replace(SETTLING, name="even@1", weights={})  # every reading at even odds: NOT ENOUGH INFO whatever the exhibits say


def grounded_config(protocol: str = "radar", **belief: object) -> RunConfig:
    """A debate grounded in desk's exhibits on the fake (auto grounds only the embedded model), over a few demo passages, each read
    (reading stopped early leaves a bound the last unread exhibit could take below 90%: that case is the unit test's below)."""
    config = with_settings(fake_config(protocol=protocol), "retrieval", web_search=False)
    config = with_settings(config, "desk", exhibits=3, unit="passage", stop_early=False)
    return with_settings(config, "belief", grounded="on", **belief)


def run(config: RunConfig, demo_data_dir: Path, embedder, claim: str = CLAIM) -> list[Event]:  # type: ignore[no-untyped-def]
    return list(stream_run(claim, config, make_services(demo_data_dir, embedder)))


def debated(events: list[Event]) -> bool:
    return any(isinstance(e, (RoundStarted, TurnCompleted)) for e in events)


def test_exhibits_that_settle_the_claim_give_the_verdict_and_the_debate_is_not_run(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, SURE)
    events = run(grounded_config(), demo_data_dir, embedder)
    assert not debated(events), "no round, no argument"
    reading = [e for e in events if isinstance(e, VerdictAggregated)]
    assert len(reading) == 1 and reading[0].ground == MEASURED and not reading[0].conflict
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert isinstance(events[-1], VerdictReached) and verdict.decided_by == SETTLED and verdict.beside is None
    assert (verdict.label, verdict.confidence, verdict.cited) == (reading[0].label, reading[0].confidence, reading[0].rests_on)
    assert verdict.label == "SUPPORTS" and verdict.confidence >= 0.9
    said = [e.detail for e in events if isinstance(e, StageCompleted) and e.stage == "debate"]
    assert len(said) == 1 and said[0].startswith("not run: desk's exhibits settle it")
    assert f"SUPPORTS at {verdict.confidence:.0%}" in said[0] and "settled from 90%" in said[0] and "sure@1" in said[0]
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None
    assert "so the debate was not run" in card.model.reason and card.model.decided_by == SETTLED
    assert "weighed from each exhibit's stance" in card.model.confidence_note, "the confidence is the reading's, said as desk says it"


@pytest.mark.parametrize("protocol", ["toolmad", "proclaim"])
def test_any_grounded_debate_is_skipped_the_same_way(protocol: str, monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, SURE)
    events = run(grounded_config(protocol), demo_data_dir, embedder)
    assert not debated(events) and events[-1].verdict.decided_by == SETTLED  # type: ignore[attr-defined]


def test_always_runs_the_debate_whatever_the_exhibits_say(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, SURE)
    events = run(grounded_config(debate_when="always"), demo_data_dir, embedder)
    assert debated(events)
    assert events[-1].verdict.decided_by != SETTLED  # type: ignore[attr-defined]
    assert not any(isinstance(e, StageCompleted) and e.detail.startswith("not run") for e in events)


def test_without_a_calibration_the_debate_runs(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, None)
    events = run(grounded_config(), demo_data_dir, embedder)
    assert debated(events) and events[-1].verdict.decided_by != SETTLED  # type: ignore[attr-defined]


def test_not_enough_info_never_settles_a_claim_but_uncontested_no_debate_could_change_it(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, UNDECIDED)
    events = run(grounded_config(), demo_data_dir, embedder)
    reading = next(e for e in events if isinstance(e, VerdictAggregated))
    assert reading.label == "NOT ENOUGH INFO" and not reading.conflict
    assert not debated(events), "the verdict is this reading whatever a debate says: it is not run"
    verdict = events[-1].verdict  # type: ignore[attr-defined]
    assert verdict.decided_by == UNCONTESTED and (verdict.label, verdict.confidence) == (reading.label, reading.confidence)
    said = [e.detail for e in events if isinstance(e, StageCompleted) and e.stage == "debate"]
    assert len(said) == 1 and said[0].startswith("not run: no debate could change the verdict, as it is")
    card = verdict_card(digest(events))
    assert card is not None and card.model is not None and "a debate could not have changed this verdict" in card.model.reason


@pytest.mark.parametrize("belief", [{"verdict": "published"}, {"calibrated_ruling": False}])
def test_where_the_debate_rules_an_unsettled_claim_is_debated(
    belief: dict[str, object], monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, UNDECIDED)
    events = run(grounded_config(**belief), demo_data_dir, embedder)
    assert next(e for e in events if isinstance(e, VerdictAggregated)).label == "NOT ENOUGH INFO"
    assert debated(events), "the protocol's own ruling would be the verdict: NOT ENOUGH INFO is not settled, so it argues"


@pytest.mark.parametrize("calibration", [SURE, UNDECIDED], ids=["sure", "undecided"])
@pytest.mark.parametrize("claim", [CLAIM, "Vitamin D supplements cure baldness in cats", "Sugar makes children hyperactive"])
def test_a_debate_not_run_would_not_have_changed_the_verdict(
    claim: str, calibration: Calibration, monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    """The rule's promise, checked against the debate itself: skipped or not, the verdict is what always-debating gives."""
    calibrate_fake(monkeypatch, calibration)
    contested = run(grounded_config(), demo_data_dir, embedder, claim=claim)
    always = run(grounded_config(debate_when="always"), demo_data_dir, embedder, claim=claim)
    skipped, full = contested[-1].verdict, always[-1].verdict  # type: ignore[attr-defined]
    assert debated(always)
    assert (skipped.label, skipped.confidence, skipped.cited) == (full.label, full.confidence, full.cited), claim
    reading = next(e for e in contested if isinstance(e, VerdictAggregated))
    assert debated(contested) == reading.conflict, "debated exactly where exhibits are contested"


def test_exhibits_that_conflict_are_debated(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    calibrate_fake(monkeypatch, SURE)
    events = run(grounded_config(), demo_data_dir, embedder, claim=CONTESTED)
    reading = next(e for e in events if isinstance(e, VerdictAggregated))
    assert reading.conflict and reading.ground == MEASURED
    assert debated(events)


CONTESTED = "Sugar makes children hyperactive"  # the demo holds the belief and the trials that found no effect


def test_the_run_page_offer_starts_the_same_settings_with_the_debate_forced() -> None:
    config = grounded_config(settled_at=0.95)
    forced = debate_anyway(config.snapshot(), config)
    assert forced.belief.debate_when == "always"
    assert forced.model_copy(update={"belief": config.belief}) == config, "every other setting as the run had it"


# --- what "settled" means, one condition at a time -------------------------------------------------------------------------


def stance(eid: str, s: float, r: float) -> Stance:
    p = {"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 6)}
    return Stance(exhibit_id=eid, probabilities=p, per_order=(p,), method="logprobs")  # type: ignore[arg-type]


def reading(stances: list[Stance], calibration: Calibration | None = SURE, *, source: str = "corpus", **extra: object) -> Reading:
    exhibits = [Evidence(id=s.exhibit_id, text="passage", source=source) for s in stances]  # type: ignore[arg-type]
    result = aggregate(stances, calibration)
    return Reading(exhibits, {e.id: e for e in exhibits}, {s.exhibit_id: s for s in stances}, {}, "", calibration, result, **extra)  # type: ignore[arg-type]


AGREEING = [stance("E1", 0.9, 0.05), stance("E2", 0.85, 0.05), stance("E3", 0.8, 0.1)]


def test_agreeing_exhibits_calibrated_on_measured_ground_settle_the_claim() -> None:
    settled = reading(AGREEING)
    assert settled.result.label == "SUPPORTS" and settled.result.confidence >= 0.9
    assert reading_ground(SURE, "demo", settled.exhibits).kind == MEASURED
    assert why_settled(settled, "demo", 0.9).startswith("desk's exhibits settle it: 3 read")
    assert why_settled(settled, "demo", 0.999) == "", "below the threshold: the debate runs"
    refuting = reading([stance("E1", 0.05, 0.9), stance("E2", 0.05, 0.85)])
    assert refuting.result.label == "REFUTES" and why_settled(refuting, "demo", 0.9), "REFUTES settles as SUPPORTS does"


def test_what_does_not_settle_a_claim() -> None:
    assert why_settled(reading(AGREEING, None), "demo", 0.5) == "", "uncalibrated: a ranking, never settled"
    assert why_settled(reading(AGREEING), "check-covid", 0.5) == "", "a calibration never measured on the corpus searched"
    assert why_settled(reading(AGREEING, source="web"), "demo", 0.5) == "", "exhibits from where the reader was never measured"
    assert why_settled(reading(AGREEING, mismatch="the calibration was fitted for orders 3"), "demo", 0.5) == "", "fitted otherwise"
    conflict = reading([*AGREEING, stance("E4", 0.05, 0.9)])
    assert conflict.result.conflict and why_settled(conflict, "demo", 0.5) == "", "strong exhibits both ways: what a debate takes up"
    unaddressed = reading([stance("E1", 0.05, 0.05), stance("E2", 0.1, 0.05)])
    assert unaddressed.result.label == "NOT ENOUGH INFO" and why_settled(unaddressed, "demo", 0.5) == ""


def test_exhibits_left_unread_must_not_be_able_to_bring_it_below_the_threshold() -> None:
    whole = reading(AGREEING)
    assert why_settled(whole, "demo", 0.9)
    near = reading(AGREEING, bounds=Bounds(low=0.93, high=0.999, settled=True, unread=4))
    assert "the 4 exhibits left unread could not bring it below 93%" in why_settled(near, "demo", 0.9)
    wide = reading(AGREEING, bounds=Bounds(low=0.7, high=0.999, settled=True, unread=4))
    assert why_settled(wide, "demo", 0.9) == "", "the same label at both ends, but not the confidence"


def test_a_settled_run_in_step_mode_is_stored_replayed_and_exported_like_any_other(
    monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path, embedder, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from pipelines.core.events import StepPaused
    from pipelines.record.export import export_run
    from pipelines.record.record_file import load_record
    from pipelines.record.store import RunStore
    from pipelines.run.runner import start_run

    calibrate_fake(monkeypatch, SURE)
    services = make_services(demo_data_dir, embedder)
    services.store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    config = with_settings(grounded_config(), "pauses", step_mode=True)
    handle = start_run(CLAIM, config, services, interactive=True)  # a page waiting to review: no round, so no pause
    live = list(handle.stream())
    assert handle.status == "completed" and not any(isinstance(e, StepPaused) for e in live)
    stored = services.store.events(handle.run_id)
    assert digest(stored).verdict == digest(live).verdict and digest(stored).verdict.decided_by == SETTLED  # type: ignore[union-attr]
    summary = services.store.get_run(handle.run_id)
    assert summary is not None
    for fmt in ("json", "md", "csv"):  # ClaimReview waits for a checker's review
        assert export_run(summary, stored, fmt), fmt
    assert f"Decided by {SETTLED}" in export_run(summary, stored, "md")
    _, read_back = load_record(export_run(summary, stored, "json"))
    assert digest(read_back).verdict.decided_by == SETTLED  # type: ignore[union-attr]


def test_a_resumed_run_that_had_argued_goes_on_arguing() -> None:
    from types import SimpleNamespace

    from pipelines.run.grounding import settled_verdict

    said: list[Event] = []
    ctx = SimpleNamespace(config=grounded_config(), emit=said.append)
    settled = reading(AGREEING)
    assert settled_verdict(ctx, settled, debated_before=True) is None and not said  # type: ignore[arg-type]
    verdict = settled_verdict(ctx, settled)  # type: ignore[arg-type]
    assert verdict is not None and verdict.decided_by == SETTLED and len(said) == 1
    always = SimpleNamespace(config=grounded_config(debate_when="always"), emit=said.append)
    assert settled_verdict(always, settled) is None  # type: ignore[arg-type]


def test_what_leaves_a_debate_unable_to_change_the_verdict() -> None:
    assert why_uncontested(reading(AGREEING)).startswith("no debate could change the verdict, as it is desk's calibrated reading of the 3")
    unaddressed = reading([stance("E1", 0.05, 0.05), stance("E2", 0.1, 0.05)])
    assert unaddressed.result.label == "NOT ENOUGH INFO" and why_uncontested(unaddressed), "whatever the label, no conflict: no change"
    assert why_uncontested(reading(AGREEING, None)) == "", "uncontested but uncalibrated: the debate's own ruling is the verdict"
    conflict = reading([*AGREEING, stance("E4", 0.05, 0.9)])
    assert conflict.result.conflict and why_uncontested(conflict) == "", "contested exhibits are read again with the arguments"
