"""The belief chart and its words: three lines over the readings, the verdict's confidence, and the round that moved the belief."""

from components.belief_chart import belief_caption, belief_lines, biggest_move, build_belief_figure, verdict_line
from pipelines.core.domain import Verdict
from pipelines.core.events import BeliefRead
from pipelines.stages.exhibit_reading import CALIBRATED, SETTLED, WEIGHED


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


def test_a_calibrated_verdict_is_said_to_be_the_last_reading_not_to_differ_from_it() -> None:
    # Seen on a mermaid replay: "The verdict NOT ENOUGH INFO (35%) differs from the judge's last belief, supported 50%",
    # where the verdict was that very reading, supported 65% of what addresses the claim, short of the 67% a side needs.
    weighed = [_read(0, 0.5, 0.28).model_copy(update={"method": "exhibits"})]
    reason = "Neither side is strong enough: supported 65%, refuted 35% (a verdict needs 67%)."
    unsettled = Verdict(label="NOT ENOUGH INFO", confidence=0.35, rationale=reason, decided_by=CALIBRATED)
    said = verdict_line(weighed, unsettled)
    assert said.startswith("The verdict NOT ENOUGH INFO (35%) is the last reading itself, calibrated; its largest share is supported 50%")
    assert said.endswith("but neither side is strong enough: supported 65%, refuted 35% (a verdict needs 67%).") and "differs" not in said
    sided = Verdict(label="SUPPORTS", confidence=0.64, rationale="r", decided_by=CALIBRATED)
    assert verdict_line(weighed, sided) == "The verdict SUPPORTED (64%) is the last reading itself, calibrated."
    asked = [_read(0, 0.5, 0.28)]  # a belief asked of the judge, not weighed: the verdict is compared with it as before
    assert "differs from the judge's last belief" in verdict_line(asked, unsettled)


def test_a_not_enough_info_verdict_of_the_reading_is_not_drawn_as_a_probability_of_not_enough_info() -> None:
    # Seen on a mermaid replay: a filled grey star "NOT ENOUGH INFO 35%" beside the grey p(not enough info) line at 22%; the
    # 35% is desk's confidence in NOT ENOUGH INFO (the weaker side's share), which the card says and the legend did not.
    weighed = [_read(0, 0.5, 0.28).model_copy(update={"method": "exhibits"})]
    for decided_by in (CALIBRATED, SETTLED, WEIGHED):  # a debate's verdict, a debate not run, desk's own
        star = build_belief_figure(weighed, Verdict(label="NOT ENOUGH INFO", confidence=0.35, decided_by=decided_by)).data[3]
        assert star.name == "verdict: NOT ENOUGH INFO 35% (desk's confidence, not p(not enough info))", decided_by
        assert star.marker.symbol == "star-open" and star.y == (0.35,)
    sided = build_belief_figure(weighed, Verdict(label="SUPPORTS", confidence=0.7, decided_by=CALIBRATED)).data[3]
    assert sided.name == "verdict: SUPPORTED 70%" and sided.marker.symbol == "star", "a side's confidence is its probability"
    asked = build_belief_figure([_read(0, 0.5, 0.28)], Verdict(label="NOT ENOUGH INFO", confidence=0.35, decided_by="judge")).data[3]
    assert asked.name == "verdict: NOT ENOUGH INFO 35%" and asked.marker.symbol == "star", "a judge's ruling is drawn as before"
    said = verdict_line(weighed, Verdict(label="NOT ENOUGH INFO", confidence=0.35, rationale="Neither side.", decided_by=SETTLED))
    assert "is the last reading itself" in said and "differs" not in said, "a debate not run: its verdict is the reading too"
    # Seen on desk's own stored runs: "The verdict NOT ENOUGH INFO (49%) agrees with the judge's last belief, not enough info 36%".
    desk = verdict_line(weighed, Verdict(label="NOT ENOUGH INFO", confidence=0.49, rationale="Neither side.", decided_by=WEIGHED))
    assert "is the last reading itself" in desk and "agrees" not in desk, "desk's own verdict is the reading"


def test_each_reading_is_named_for_the_moment_it_was_read_after() -> None:
    court = [_read(1, 0.5, 0.3), _read(2, 0.55, 0.3), _read(3, 0.5, 0.45, "after the role switch: 6 turns, 4 evidence items")]
    assert list(build_belief_figure(court).data[0].x) == ["round 1", "round 2", "role switch"]
    assert biggest_move(court) == "The belief moved most at the role switch: refuted from 30% to 45% (+15 points)."
    researcher = [
        _read(1, 0.5, 0.3, "after step 1: no turns, 3 evidence items"),
        _read(3, 0.7, 0.2, "at the end: 1 turn, 5 evidence items"),
    ]
    assert list(build_belief_figure(researcher).data[0].x) == ["step 1", "end"]
    radar = [_read(1, 0.5, 0.3, "after the opening: 2 turns, 4 evidence items"), _read(2, 0.5, 0.3, "after the closing: 4 turns")]
    assert list(build_belief_figure(radar).data[0].x) == ["opening", "closing"]


def test_the_caption_says_how_far_this_models_belief_could_be_read_escaped_for_markdown() -> None:
    plain = BeliefRead(round=1, probabilities={"SUPPORTS": 0.2, "REFUTES": 0.2, "NOT ENOUGH INFO": 0.6})
    assert belief_caption([plain]).endswith("not the ruling itself.")
    measured = plain.model_copy(update={"reliability": "told them apart no better than chance (AUC 0.45 over 16 claims) *bold*"})
    caption = belief_caption([plain, measured])
    assert "no better than chance \\(AUC 0\\.45 over 16 claims\\)" in caption and "\\*bold\\*" in caption

    weighed = plain.model_copy(update={"method": "exhibits", "reliability": ""})
    assert belief_caption([weighed]).startswith("Weighed as desk weighs its exhibits") and "no better than chance" not in belief_caption(
        [weighed]
    )
    reread = weighed.model_copy(update={"round": 1, "over": "after round 1: 1 item read again with the arguments made about them"})
    assert "leans the argument's way" in belief_caption([weighed, reread]), "a swing after arguments is said for what it is"
    assert "leans the argument's way" not in belief_caption([weighed]), "no re-read, nothing to warn of"
