"""The reading cut (issue 50): desk stops reading once no unread exhibit could change its verdict.

The stopping rule is only worth its tokens if it is never wrong: these tests try the stances an
unread exhibit could take (random ones and every extreme) against each bound that calls a verdict
settled. The sentences desk quotes on the card are those closest to the claim: the one that decides it
must be among them.
"""

from __future__ import annotations

import itertools
import random

import pytest

from pipelines.calibration.files import Calibration, load_shipped
from pipelines.core.domain import Evidence
from pipelines.core.events import ExhibitStanceRead, StageCompleted, VerdictAggregated
from pipelines.record.digest import digest
from pipelines.record.verdict_card import verdict_card
from pipelines.run.runner import Services, stream_run
from pipelines.run.tools.embeddings import Embedder
from pipelines.stages import exhibit_reading
from pipelines.stages.exhibits import quote_sentences
from pipelines.stages.stance import Stance
from pipelines.stages.stance_aggregation import aggregate, verdict_bounds
from tests.fakes import protocol_config

SHIPPED = load_shipped("qwen2.5-coder-1.5b-instruct-q4_k_m", "contrast")
CORNERS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.5, 0.5, 0.0))


def stance(i: int, s: float, r: float, u: float) -> Stance:
    total = s + r + u
    p = {"SUPPORTS": s / total, "REFUTES": r / total, "UNRELATED": u / total}
    return Stance(exhibit_id=f"E{i}", probabilities=p, per_order=(p,), method="logprobs")  # type: ignore[arg-type]


def random_stance(rng: random.Random, i: int) -> Stance:
    return stance(i, *(rng.random() ** 2 + 1e-6 for _ in range(3)))


def calibrations(rng: random.Random) -> list[Calibration]:
    assert SHIPPED is not None
    drawn = [
        Calibration(
            name=f"drawn@{k}",
            model="m",
            bias=rng.uniform(-1, 1),
            weights={n: rng.uniform(-8, 8) for n in rng.sample(["net", "gap", "top", "addressed", "net_addressed"], 3)},
            decide_at=rng.uniform(0.5, 0.8),
        )
        for k in range(6)
    ]
    return [SHIPPED, *drawn]


def test_a_settled_verdict_never_changes_whatever_the_unread_exhibits_say() -> None:
    rng = random.Random(7)
    settled_seen = 0
    for calibration in calibrations(rng):
        for _ in range(60):
            found = [random_stance(rng, i) for i in range(rng.randint(2, 8))]
            if rng.random() < 0.5:  # a strong first exhibit, where stopping is most likely
                found[0] = stance(0, 0.95, 0.03, 0.02) if rng.random() < 0.5 else stance(0, 0.03, 0.95, 0.02)
            for k in range(1, len(found)):
                read, unread = found[:k], len(found) - k
                bounds = verdict_bounds(read, unread, calibration)
                if not bounds.settled:
                    continue
                settled_seen += 1
                label = aggregate(read, calibration).label
                completions = [[random_stance(rng, 100 + j) for j in range(unread)] for _ in range(40)]
                completions += [
                    [stance(100 + j, *c) for j, c in enumerate(combo)] for combo in itertools.product(CORNERS, repeat=min(unread, 3))
                ]
                for rest in completions:
                    everything = aggregate([*read, *rest], calibration)
                    assert everything.label == label, f"{calibration.name}: read {k}, an unread exhibit flipped {label}"
                    assert bounds.low - 1e-3 <= everything.calibrated <= bounds.high + 1e-3
    assert settled_seen > 20, "the test must see settled verdicts to mean anything"


def test_a_verdict_one_exhibit_could_flip_is_not_settled() -> None:
    assert SHIPPED is not None
    read = [stance(1, 0.5, 0.3, 0.2), stance(2, 0.2, 0.3, 0.5)]
    bounds = verdict_bounds(read, 1, SHIPPED)
    assert not bounds.settled
    labels = {aggregate([*read, stance(3, *c)], SHIPPED).label for c in CORNERS}
    assert len(labels) > 1, "one unread exhibit can indeed change this verdict"
    assert verdict_bounds(read, 1, None).settled is False, "uncalibrated, any exhibit could move it"
    nothing_addressed = [stance(1, 0.05, 0.05, 0.9)]
    assert not verdict_bounds(nothing_addressed, 3, SHIPPED).settled, "an unread exhibit could be the first to address the claim"


def test_reading_stops_before_no_exhibit_a_checker_pasted() -> None:
    cfg = protocol_config("desk").desk
    strong = [stance(1, 0.97, 0.02, 0.01), stance(2, 0.96, 0.02, 0.02)]
    corpus = [Evidence(id="E3", source="corpus", title="", text="x")]
    pasted = [Evidence(id="E4", source="user", title="", text="y")]
    assert exhibit_reading._settled(cfg, strong, corpus, SHIPPED) is not None
    assert exhibit_reading._settled(cfg, strong, [*corpus, *pasted], SHIPPED) is None
    assert exhibit_reading._settled(cfg.model_copy(update={"stop_early": False}), strong, corpus, SHIPPED) is None


def test_desk_stops_reading_once_settled_and_says_what_it_left(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    # A calibration that trusts the first exhibit above all: once it is read and strong, the rest cannot move the verdict.
    trusting = Calibration(name="trusting@1", model="fake", bias=0.0, weights={"top": 12.0, "net": 1.0}, decide_at=0.6)
    monkeypatch.setattr(exhibit_reading, "load_calibration", lambda *a, **k: trusting)
    config = protocol_config("desk", exhibits=6, debate=False)
    events = list(stream_run("Masks reduce transmission of respiratory viruses", config, services))
    read = [e for e in events if isinstance(e, ExhibitStanceRead)]
    verdict = [e for e in events if isinstance(e, VerdictAggregated)][-1]
    assert verdict.found == 6 and verdict.read == len(read) < 6, "it stopped before the last exhibit"
    assert verdict.bound is not None and verdict.bound[0] <= verdict.calibrated <= verdict.bound[1]
    said = [e.detail for e in events if isinstance(e, StageCompleted) and e.stage == "stances"][-1]
    assert f"the other {6 - len(read)} exhibits were not read" in said and "the same verdict" in said
    note = verdict_card(digest(events)).model.reading_note  # type: ignore[union-attr]
    assert f"The other {6 - len(read)} could not have changed the verdict" in note and "Unless" not in note, "no debate: nothing uncovered"
    debating = list(stream_run("Masks reduce transmission of respiratory viruses", protocol_config("desk", exhibits=6), services))
    note = verdict_card(digest(debating)).model.reading_note  # type: ignore[union-attr]
    assert "could not have changed the verdict" in note and "that would have started a debate, which the bound does not cover" in note
    everything = list(
        stream_run(
            "Masks reduce transmission of respiratory viruses",
            protocol_config("desk", exhibits=6, debate=False, stop_early=False),
            services,
        )
    )
    assert everything[-1].verdict.label == events[-1].verdict.label  # type: ignore[attr-defined]
    assert len([e for e in everything if isinstance(e, ExhibitStanceRead)]) == 6


def test_the_sentences_kept_are_those_that_decide_the_claim(embedder: Embedder) -> None:
    import asyncio

    claim = "Vitamin D supplements lower the risk of severe COVID-19."
    deciding = "In the trial, vitamin D supplementation did not lower the risk of severe COVID-19 among adults."
    passage = Evidence(
        id="E1",
        source="corpus",
        title="A trial",
        text=(
            "Hospitals in the region were crowded during the second wave. "
            f"{deciding} "
            "Participants were recruited from twelve clinics. "
            "The funding came from a national research council."
        ),
    )
    quotes = asyncio.run(quote_sentences(embedder, claim, [passage], 1))
    assert quotes["E1"] == (deciding,)
    two = asyncio.run(quote_sentences(embedder, claim, [passage], 2))["E1"]
    assert deciding in two and "funding" not in " ".join(two)


def test_the_weighing_s_reason_says_one_exhibit_in_the_singular() -> None:
    from pipelines.stages.stance_aggregation import _reason

    reason = _reason("SUPPORTS", {"E1": "supported", "E2": "refuted", "E3": "unrelated"}, 0.7, calibration="")
    assert reason.startswith("1 of 3 exhibits points towards supported (E1); 1 towards refuted (E2); 1 does not address the claim.")
    reason = _reason("REFUTES", {"E1": "refuted", "E2": "refuted", "E3": "unrelated", "E4": "unrelated"}, 0.8, calibration="")
    assert reason.startswith("0 of 4 exhibits point towards supported; 2 towards refuted (E1, E2); 2 do not address the claim.")


def test_a_verdict_on_the_side_fewer_exhibits_point_to_says_the_weighing_is_by_strength() -> None:
    """Seen on the embedded model: "1 of 9 exhibits points towards supported; 4 towards refuted ... Weighed together:
    supported, 78%" read as a contradiction: the weighing counts how surely each exhibit points (its strongest most)."""
    from pipelines.stages.stance_aggregation import _reason

    few = _reason("SUPPORTS", {"E1": "supported", "E2": "refuted", "E3": "refuted"}, 0.78, calibration="c@1")
    assert "Weighed together by how surely each exhibit points, not by how many point each way: supported, 78%" in few
    many = _reason("SUPPORTS", {"E1": "supported", "E2": "supported", "E3": "refuted"}, 0.78, calibration="c@1")
    assert "Weighed together: supported, 78%" in many
