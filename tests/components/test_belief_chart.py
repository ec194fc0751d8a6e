"""The belief chart and its words: three lines over the readings, the verdict's confidence, and the round that moved the belief."""

from components.belief_chart import belief_lines, biggest_move, build_belief_figure, verdict_line
from pipelines.domain import Verdict
from pipelines.events import BeliefRead


def _read(round: int, s: float, r: float, over: str = "") -> BeliefRead:
    return BeliefRead(
        round=round,
        probabilities={"SUPPORTS": s, "REFUTES": r, "NOT ENOUGH INFO": round_off(1 - s - r)},
        over=over or f"after round {round}",
    )


def round_off(x: float) -> float:
    return float(f"{x:.4f}")


READINGS = [_read(0, 0.4, 0.4, "from the exhibits alone"), _read(1, 0.45, 0.4), _read(2, 0.81, 0.1)]


def test_three_lines_over_the_readings_and_a_star_for_the_verdicts_confidence() -> None:
    figure = build_belief_figure(READINGS, Verdict(label="TRUE", confidence=0.7, decided_by="judge"))
    names = [t.name for t in figure.data]
    assert names[:3] == ["p(supported)", "p(refuted)", "p(not enough info)"]
    assert list(figure.data[0].x) == ["before the debate", "round 1", "round 2"]
    assert list(figure.data[0].y) == [0.4, 0.45, 0.81]
    assert figure.data[3].y == (0.7,) and figure.data[3].marker.color == "#2ca02c", "radar's TRUE is drawn on the supported line"
    assert len(build_belief_figure(READINGS, Verdict(label="SUPPORTS", decided_by="agent")).data) == 3, "no confidence stated, no star"


def test_the_text_names_the_round_that_moved_the_belief_and_by_how_much() -> None:
    lines = belief_lines(READINGS)
    assert lines[0].startswith("Before the debate (from the exhibits alone): supported 40%, refuted 40%")
    assert lines[2].endswith("supported +36 points")
    assert biggest_move(READINGS) == "The belief moved most at round 2: supported from 45% to 81% (+36 points)."
    assert biggest_move(READINGS[:1]) == ""
    assert biggest_move([READINGS[0], READINGS[0]]) == "The belief did not move over the 2 readings."
    said = verdict_line(READINGS, Verdict(label="REFUTES", confidence=0.6, decided_by="judge"))
    assert said == "The verdict REFUTED (60%) differs from the judge's last belief, supported 81%."  # in the card's one vocabulary
