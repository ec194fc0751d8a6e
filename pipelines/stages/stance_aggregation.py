"""Aggregation: the exhibits' stances combined into the claim's probabilities, a calibrated verdict, and what it rests on.

Pure functions, no model calls. The stances become a few features (``stance_features``);
a logistic calibration fitted for one model (``pipelines.calibration``: shipped, fitted on
Check-COVID *train*, or the desk's own from ``python -m pipelines calibrate``) turns them
into p(supported | the exhibits settle it). Where no calibration was fitted for the model, the
raw relevance-weighted stance is used and the verdict says it is uncalibrated.

NOT ENOUGH INFO has two roads: no exhibit addresses the claim (every exhibit's "does not
address" probability is high), or the likelier side is below the least confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.calibration.files import Calibration
from pipelines.core.domain import Ruling, Verdict
from pipelines.core.text.probability import percent
from pipelines.stages.stance import Stance

UNADDRESSED_AT = 0.5  # p(no exhibit addresses the claim) at or above this is NOT ENOUGH INFO
DEFAULT_DECIDE_AT = 0.55  # an uncalibrated verdict needs at least this much for its side
RESTS_ON = 3  # at most this many exhibits named as what a verdict rests on


@dataclass(frozen=True)
class Aggregate:
    """The claim's probabilities and the verdict that follows from them."""

    probabilities: dict[str, float]  # SUPPORTS, REFUTES, NOT ENOUGH INFO
    label: str
    points_to: dict[str, str]  # exhibit id -> "supported", "refuted" or "unrelated", read against the model's usual lean
    confidence: float
    raw: float  # uncalibrated p(supported)
    calibrated: float  # p(supported) after calibration (= raw when uncalibrated)
    features: dict[str, float]
    rests_on: tuple[str, ...]
    reason: str
    conflict: bool
    contested: tuple[str, ...]
    calibration: str

    def verdict(self, *, decided_by: str, stop_reason: str, beside: Ruling | None = None) -> Verdict:
        """The run's verdict from this reading: its label and confidence, its reason, the exhibits it rests on."""
        return Verdict(
            label=self.label,
            confidence=self.confidence,
            rationale=self.reason,
            cited=self.rests_on,
            decided_by=decided_by,
            stop_reason=stop_reason,
            beside=beside,
        )


def stance_features(stances: Sequence[Stance]) -> dict[str, float]:
    """What the calibration reads, from the stances in retrieval order.

    - net: the exhibits' support minus refutation, each weighted by how much it addresses the claim;
    - gap: the strongest support minus the strongest refutation;
    - top: support minus refutation of the best-ranked exhibit;
    - addressed: the largest probability that an exhibit addresses the claim at all;
    - net_addressed: net over the exhibits more likely to address the claim than not (net when
      none does): what an uncalibrated verdict reads, so that twenty passages on other subjects
      do not water down the few that bear on the claim.
    """
    if not stances:
        return {"net": 0.0, "gap": 0.0, "top": 0.0, "addressed": 0.0, "net_addressed": 0.0}
    s = [x.p("SUPPORTS") for x in stances]
    r = [x.p("REFUTES") for x in stances]
    w = [1.0 - x.p("UNRELATED") for x in stances]
    bearing = [i for i, x in enumerate(stances) if x.p("UNRELATED") < UNADDRESSED_AT]  # those `pointing` does not call unrelated
    return {
        "net": round(_net(s, r, w, range(len(w))), 6),
        "gap": round(max(s) - max(r), 6),
        "top": round(s[0] - r[0], 6),
        "addressed": round(max(w), 6),
        "net_addressed": round(_net(s, r, w, bearing or range(len(w))), 6),
    }


def _net(s: Sequence[float], r: Sequence[float], w: Sequence[float], kept: Sequence[int]) -> float:
    """The kept exhibits' support minus refutation, each weighted by how much it addresses the claim."""
    weight = sum(w[i] for i in kept)
    return sum(w[i] * (s[i] - r[i]) for i in kept) / weight if weight > 1e-9 else 0.0


def aggregate(stances: Sequence[Stance], calibration: Calibration | None, *, strong_at: float = 0.5, decide_at: float = 0.0) -> Aggregate:
    """The verdict the stances support; ``decide_at`` 0 takes the calibration's own threshold."""
    features = stance_features(stances)
    raw = supported(features, None)
    q = supported(features, calibration)
    threshold = decide_at or (calibration.decide_at if calibration is not None else DEFAULT_DECIDE_AT)
    p_unaddressed = 1.0 - features["addressed"]
    probabilities = {
        "SUPPORTS": round((1 - p_unaddressed) * q, 4),
        "REFUTES": round((1 - p_unaddressed) * (1 - q), 4),
        "NOT ENOUGH INFO": round(p_unaddressed, 4),
    }
    strong_for = _strong(stances, "SUPPORTS", strong_at)  # a debate needs exhibits the model itself reads as strong either way
    strong_against = _strong(stances, "REFUTES", strong_at)
    alone = {x.exhibit_id: supported(stance_features([x]), calibration) for x in stances}  # each exhibit read on its own
    points_to = {x.exhibit_id: pointing(x, alone[x.exhibit_id]) for x in stances}
    side_p = max(q, 1 - q)
    if not stances:
        label, reason = "NOT ENOUGH INFO", "No exhibit was found for the claim."
    elif p_unaddressed >= UNADDRESSED_AT:
        label, reason = "NOT ENOUGH INFO", f"None of the {len(stances)} exhibits addresses the claim."
    elif side_p < threshold:
        label = "NOT ENOUGH INFO"
        reason = f"Neither side is strong enough: supported {percent(q)}, refuted {percent(1 - q)} (a verdict needs {threshold:.0%})."
    else:
        label = _side(q, threshold)
        reason = ""
    rests_on = _rests_on(stances, label, points_to, alone)
    if not reason:
        reason = _reason(label, points_to, side_p, calibration=calibration.name if calibration is not None else "")
    confidence = side_p if label != "NOT ENOUGH INFO" else max(p_unaddressed, 1 - side_p)
    return Aggregate(
        probabilities=probabilities,
        label=label,
        points_to=points_to,
        confidence=round(confidence, 4),
        raw=round(raw, 4),
        calibrated=round(q, 4),
        features=features,
        rests_on=rests_on,
        reason=reason,
        conflict=bool(strong_for and strong_against),
        contested=tuple(strong_for + strong_against),
        calibration=calibration.name if calibration is not None else "uncalibrated",
    )


def _strong(stances: Sequence[Stance], side: str, at: float) -> list[str]:
    return [x.exhibit_id for x in sorted(stances, key=lambda x: -x.p(side)) if x.p(side) >= at]  # type: ignore[arg-type]


def supported(features: dict[str, float], calibration: Calibration | None) -> float:
    """p(supported) from stance features: the calibration's, else the raw relevance-weighted stance."""
    return calibration.apply(features) if calibration is not None else 0.5 + 0.5 * features["net_addressed"]


def pointing(stance: Stance, alone: float) -> str:
    """Which way one exhibit points, read against the model's usual lean.

    Qwen2.5-1.5B answers "contradicts" for most passages, related or not, so its raw stances
    over-count refutation. The calibration knows that lean: the exhibit points towards
    "supported" when the calibration, reading that exhibit alone (``alone``), puts the claim
    above even odds. An exhibit the model finds more likely unrelated than not points nowhere.
    """
    if stance.p("UNRELATED") >= UNADDRESSED_AT:
        return "unrelated"
    return "supported" if alone >= 0.5 else "refuted"


def _rests_on(stances: Sequence[Stance], label: str, points_to: dict[str, str], alone: dict[str, float]) -> tuple[str, ...]:
    """The exhibits that point the verdict's way, strongest first (at most RESTS_ON); for NOT ENOUGH INFO, those closest to addressing it."""
    if label == "NOT ENOUGH INFO":
        ranked = sorted(stances, key=lambda x: x.p("UNRELATED"))
        return tuple(x.exhibit_id for x in ranked[:RESTS_ON])
    side = "supported" if label == "SUPPORTS" else "refuted"
    sign = -1.0 if label == "SUPPORTS" else 1.0
    pointing_there = [x for x in stances if points_to[x.exhibit_id] == side] or list(stances)
    ranked = sorted(pointing_there, key=lambda x: sign * alone[x.exhibit_id])
    return tuple(x.exhibit_id for x in ranked[:RESTS_ON])


def _reason(label: str, points_to: dict[str, str], side_p: float, *, calibration: str) -> str:
    def named(ids: list[str]) -> str:
        shown = ", ".join(ids[:RESTS_ON]) + (f" and {len(ids) - RESTS_ON} more" if len(ids) > RESTS_ON else "")
        return f" ({shown})" if ids else ""

    groups = {side: [eid for eid, p in points_to.items() if p == side] for side in ("supported", "refuted", "unrelated")}
    lean = "read against this model's usual lean, " if calibration else ""
    parts = [
        f"{lean.capitalize() if lean else ''}{len(groups['supported'])} of {len(points_to)} exhibits "
        f"{'points' if len(groups['supported']) == 1 else 'point'} towards supported"
        f"{named(groups['supported'])}",
        f"{len(groups['refuted'])} towards refuted{named(groups['refuted'])}",
    ]
    if groups["unrelated"]:
        parts.append(f"{len(groups['unrelated'])} {'does' if len(groups['unrelated']) == 1 else 'do'} not address the claim")
    word = "supported" if label == "SUPPORTS" else "refuted"
    how = f"calibrated: {calibration}" if calibration else "uncalibrated"
    other = "refuted" if word == "supported" else "supported"
    # fewer exhibits on the verdict's side than on the other: say why, or the sentence reads as a contradiction
    by = " by how surely each exhibit points, not by how many point each way" if len(groups[word]) < len(groups[other]) else ""
    return f"{'; '.join(parts)}. Weighed together{by}: {word}, {percent(side_p)} ({how})."


@dataclass(frozen=True)
class Bounds:
    """How far the exhibits not yet read could move the verdict: p(supported) between ``low`` and ``high`` whatever they say."""

    low: float
    high: float
    settled: bool  # the verdict is the same at both ends, and the claim is addressed whatever the rest say
    unread: int


def verdict_bounds(read: Sequence[Stance], unread: int, calibration: Calibration | None, *, decide_at: float = 0.0) -> Bounds:
    """The calibrated p(supported) over every stance the ``unread`` exhibits could take, and whether the verdict is settled.

    Each unread exhibit may take any stance at all (any probabilities of supporting, contradicting and not addressing).
    Each feature gets the widest interval those stances allow: ``top`` is the first exhibit's (fixed once it is read);
    ``gap`` is at least the strongest read support less 1 and at most 1 less the strongest read refutation; ``net`` is
    a weighted mean whose unread weights reach 1 either way; ``addressed`` can only rise; any other feature spans its whole
    range. The calibration is linear in the features before its logistic, so each end takes each feature at the end its
    weight favours: the interval is never narrower than the truth (it may be wider, as two features' ends may need
    different stances of one exhibit). Settled: the verdict (SUPPORTS, REFUTES or NOT ENOUGH INFO at the threshold) is
    the same at both ends and the most-addressed exhibit already addresses the claim, so no unread exhibit could flip it.
    """
    features = stance_features(read)
    if unread <= 0:
        now = supported(features, calibration)
        return Bounds(now, now, True, 0)
    if calibration is None:  # uncalibrated: 0.5 + 0.5 net_addressed, which unread exhibits can move anywhere
        low, high = 0.0, 1.0
    else:
        ranges = _feature_ranges(read, unread)
        ends = {name: ranges.get(name, (-1.0, 1.0)) for name in calibration.weights}
        low = calibration.apply({n: lo if calibration.weights[n] >= 0 else hi for n, (lo, hi) in ends.items()})
        high = calibration.apply({n: hi if calibration.weights[n] >= 0 else lo for n, (lo, hi) in ends.items()})
    threshold = decide_at or (calibration.decide_at if calibration is not None else DEFAULT_DECIDE_AT)
    settled = 1.0 - features["addressed"] < UNADDRESSED_AT and _side(low, threshold) == _side(high, threshold)
    return Bounds(round(low, 4), round(high, 4), settled, unread)


def settled_bounds(
    read: Sequence[Stance], unread: int, calibration: Calibration | None, *, strong_at: float, decide_at: float, debate: bool
) -> Bounds | None:
    """The bound when reading can stop after ``read`` (no unread exhibit could change the verdict), else None.

    Never without a calibration (uncalibrated, any exhibit could move it), nor while the read exhibits conflict and a
    debate would take them up (the debate reads them again, which no bound covers). What the bound does not cover: an
    unread exhibit strong against a strong one read would have made a conflict, and its debate could move the verdict. To
    rule that out, reading could not stop once any strong exhibit is read, which on Check-COVID dev is every stop (the
    stored readings: it would read every exhibit of all 106 sided claims); the bound stood alone there on 39 of the 40
    claims it stopped early, and the card says what it does not cover.
    """
    if unread <= 0 or calibration is None:
        return None
    if debate and aggregate(read, calibration, strong_at=strong_at, decide_at=decide_at).conflict:
        return None
    bounds = verdict_bounds(read, unread, calibration, decide_at=decide_at)
    return bounds if bounds.settled else None


def _feature_ranges(read: Sequence[Stance], unread: int) -> dict[str, tuple[float, float]]:
    s = [x.p("SUPPORTS") for x in read]
    r = [x.p("REFUTES") for x in read]
    w = [1.0 - x.p("UNRELATED") for x in read]
    weight = sum(w)
    current = _net(s, r, w, range(len(w))) if read else 0.0
    if weight > 1e-9:
        net = (min(current, (weight * current - unread) / (weight + unread)), max(current, (weight * current + unread) / (weight + unread)))
    else:
        net = (-1.0, 1.0)
    return {
        "top": (s[0] - r[0], s[0] - r[0]) if read else (-1.0, 1.0),
        "gap": (max(s, default=0.0) - 1.0, 1.0 - max(r, default=0.0)),
        "net": net,
        "addressed": (max(w, default=0.0), 1.0),
    }


def _side(q: float, threshold: float) -> str:
    """The verdict p(supported) ``q`` gives at the least confidence ``threshold``, once the claim is addressed."""
    if max(q, 1 - q) < threshold:
        return "NOT ENOUGH INFO"
    return "SUPPORTS" if q >= 0.5 else "REFUTES"
