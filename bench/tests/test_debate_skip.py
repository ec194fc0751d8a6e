"""bench/debate_skip.py: the app's own rules applied to stored readings, each claim counted under the rule that skips its debate."""

from bench.debate_skip import reading_of, tally
from pipelines.calibration.files import load_shipped

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def exhibit(eid: str, s: float, r: float) -> dict[str, object]:
    p = {"SUPPORTS": s, "REFUTES": r, "UNRELATED": round(1 - s - r, 6)}
    return {"id": eid, "round": 1, "probabilities": p, "per_order": [p, p]}


def record(gold: str, *exhibits: dict[str, object]) -> dict[str, object]:
    return {"id": gold, "gold": gold, "exhibits": list(exhibits)}


def test_each_claim_is_counted_under_the_rule_that_skips_its_debate() -> None:
    calibration = load_shipped(MODEL, "contrast")
    assert calibration is not None
    sure = record("SUPPORTS", *[exhibit(f"E{i}", 0.97, 0.01) for i in range(10)])
    weak = record("NOT ENOUGH INFO", exhibit("E1", 0.2, 0.1), exhibit("E2", 0.1, 0.1))
    contested = record("REFUTES", exhibit("E1", 0.6, 0.3), exhibit("E2", 0.02, 0.95), exhibit("E3", 0.1, 0.1))
    assert reading_of(contested, calibration, "check-covid").result.conflict, "a first exhibit this weak does not end the reading"
    groups = tally([sure, weak, contested], calibration, "check-covid", 0.9)
    every = groups["all claims"]
    assert every["claims"] == 3
    assert every["not debated: the exhibits settle it"] == 1 and every["their verdicts right"] == 1.0
    assert every["not debated: no debate could change it"] == 1
    assert every["debated: strong exhibits both ways"] == 1
    assert every["share not debated (both rules)"] == 2 / 3
    assert groups["SUPPORT/REFUTE claims"]["claims"] == 2, "the NOT ENOUGH INFO claim is left out of the sided group"
