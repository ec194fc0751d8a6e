from bench.call_order import config_for, next_difference


def test_the_first_turn_where_runs_differ_is_counted_from_one() -> None:
    assert next_difference([["a", "b", "c"], ["a", "b", "x"]]) == 3
    assert next_difference([["a"], ["z"]]) == 1
    assert next_difference([["a", "b"], ["a", "b", "c"]]) == 3, "one run longer than the other: they differ after the shorter"


def test_every_role_runs_the_given_model_offline() -> None:
    config = config_for("proclaim", "/m.gguf")
    assert {config.role(r).backend for r in ("debater", "judge", "scorer")} == {"embedded"}
    assert {config.role(r).model for r in ("debater", "judge", "scorer")} == {"/m.gguf"}
    assert not config.retrieval.web_search and config.protocol == "proclaim"
