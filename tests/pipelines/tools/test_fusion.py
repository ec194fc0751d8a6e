import pytest

from pipelines.run.tools.fusion import best_per_group, min_max, ranked, reciprocal_rank_fusion, weighted_fusion


def test_reciprocal_rank_fusion_rewards_agreement_between_rankings() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b", "c"], "lexical": ["b", "c", "d"]}, k=60)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61) and fused["d"] == pytest.approx(1 / 63)
    assert ranked(fused) == ["b", "c", "a", "d"]


def test_reciprocal_rank_fusion_weights_and_a_small_k_favour_the_head() -> None:
    rankings = {"dense": ["a", "b"], "lexical": ["b", "a"]}
    assert ranked(reciprocal_rank_fusion(rankings, k=1, weights={"dense": 2.0, "lexical": 1.0})) == ["a", "b"]
    assert ranked(reciprocal_rank_fusion(rankings, weights={"dense": 0.0, "lexical": 1.0})) == ["b", "a"]


def test_min_max_scales_one_query_to_0_1() -> None:
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 7.0}) == {"a": 1.0} and min_max({}) == {}


def test_weighted_fusion_of_hand_made_scores() -> None:
    dense = {"a": 0.9, "b": 0.5, "c": 0.1}  # normalized: a 1, b 0.5, c 0
    lexical = {"c": 12.0, "b": 8.0}  # normalized: c 1, b 0; a unseen -> 0
    fused = weighted_fusion({"dense": dense, "lexical": lexical}, {"dense": 1.0, "lexical": 1.0})
    assert fused == pytest.approx({"a": 1.0, "b": 0.5, "c": 1.0})
    assert ranked(fused) == ["a", "c", "b"]  # ties broken by id
    lexical_heavy = weighted_fusion({"dense": dense, "lexical": lexical}, {"dense": 1.0, "lexical": 3.0})
    assert ranked(lexical_heavy)[0] == "c"


def test_best_per_group_keeps_each_documents_best_passage() -> None:
    scores = {"d1#p0": 0.2, "d1#p1": 0.7, "d2#p0": 0.5, "d2#p1": 0.5}
    groups = {pid: pid.split("#")[0] for pid in scores}
    assert best_per_group(scores, groups) == {"d1": ("d1#p1", 0.7), "d2": ("d2#p0", 0.5)}
