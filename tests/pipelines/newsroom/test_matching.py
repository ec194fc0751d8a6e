"""Seen before? A claim that comes in again, worded differently, finds the earlier fact-check; an unrelated one does not;
the desk's reviewed claims and imported reviews are what it is matched against."""

from __future__ import annotations

import pytest

from pipelines.newsroom.access.users import User
from pipelines.newsroom.matching import Checked, Thresholds, content_words, earlier_checks, nearest, word_overlap
from pipelines.newsroom.queue import ClaimQueue, NewClaim
from pipelines.newsroom.reviews_in import OutsideReview
from pipelines.record.store import RunStore
from tests.pipelines.newsroom.test_queue import CLAIM, make_run

ANA = User("ana", "Ana Ruiz", "editor")
CHECKED = [
    Checked("claim:a", "Only about 250 Texans have been killed in action since 9/11.", "REFUTED", "2026-11-30"),
    Checked("claim:b", "Sesame Street made more than $211 million from toy sales between 2003 and 2006.", "SUPPORTED"),
    Checked("review:c", "The Moon landing was filmed in a studio.", "False", "2026-10-01", "https://f.example.org/moon", "Example Checks"),
]


def test_a_paraphrase_finds_its_earlier_check_first_and_is_offered(embedder) -> None:  # type: ignore[no-untyped-def]
    (best, *_) = nearest("Since September 11 only around 250 soldiers from Texas died in combat.", CHECKED, embedder)
    assert best.checked.key == "claim:a" and best.level in ("suggest", "join")
    assert best.describe().startswith("checked on 2026-11-30 by this desk: REFUTED (similarity")


def test_an_unrelated_claim_is_offered_nothing(embedder) -> None:  # type: ignore[no-untyped-def]
    matches = nearest("Drinking coffee causes hair loss in adults.", CHECKED, embedder)
    assert [m.level for m in matches] == ["nearest"] * 3


def test_the_same_words_join_and_different_figures_score_lower(embedder) -> None:  # type: ignore[no-untyped-def]
    same = nearest(CHECKED[1].text, CHECKED, embedder, k=1)[0]
    other = nearest("Sesame Street made more than $90 million from toy sales between 1990 and 1994.", CHECKED, embedder, k=1)[0]
    assert same.level == "join" and other.score < same.score


def test_thresholds_must_be_in_order() -> None:
    with pytest.raises(ValueError, match="suggest <= join"):
        Thresholds(suggest=0.9, join=0.8)
    assert Thresholds(0.6, 0.8).level(0.7) == "suggest" and Thresholds(0.6, 0.8).level(0.8) == "join"


def test_numbers_count_whole_in_the_word_overlap() -> None:
    assert "211" in content_words("$211 million") and word_overlap({"a", "b"}, {"a"}) == 1.0 and word_overlap(set(), {"a"}) == 0.0


def test_only_reviewed_claims_and_imported_reviews_are_earlier_checks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    queue = ClaimQueue(store.engine)
    unreviewed = queue.add(NewClaim("Tides follow the Moon"), ANA)
    reviewed = queue.add(NewClaim(CLAIM), ANA)
    make_run(store, "r1", CLAIM)
    queue.link_run("r1", CLAIM, ANA, claim_id=reviewed.id)
    queue.review(reviewed.id, ANA, "SUPPORTED", "The ferry trial found fewer cases.")
    outside = [OutsideReview("Example Checks", "https://f.example.org/x", "Vaccines contain microchips", "False", "2026-10-01", id="r1")]
    checks = earlier_checks(queue.find(), outside)
    assert [c.key for c in checks] == [f"claim:{reviewed.id}", "review:r1"] and unreviewed.id not in str(checks)
    assert checks[0].verdict == "SUPPORTED" and checks[0].own and not checks[1].own and checks[1].source == "Example Checks"


def test_a_claim_in_another_language_is_offered_at_most_never_joined_on_its_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pipelines.newsroom.matching import across_languages, check_on_intake

    class Same:  # every text the same vector: a perfect score, so only the languages can keep the two apart
        name, dimension = "same", 2

        def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
            import numpy as np

            return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

    queue = ClaimQueue(RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}").engine)
    outside = [OutsideReview("Chequeado", "https://f.example.org/x", "Las vacunas contienen microchips", "Falso", language="es", id="r1")]
    english = queue.add(NewClaim("Las vacunas contienen microchips", language="en"), ANA)
    matches = check_on_intake(english, queue, outside, Same(), ANA)
    assert matches[0].level == "join" and "in es" in matches[0].describe()
    assert (queue.get(english.id) or english).repeats == "", "told apart by language: offered, not joined"
    spanish = queue.add(NewClaim("Las vacunas contienen microchips", language="es"), ANA)
    check_on_intake(spanish, queue, outside, Same(), ANA)
    assert (queue.get(spanish.id) or spanish).repeats == "review:r1"
    assert across_languages("pt-BR", "es") and not across_languages("pt-BR", "pt") and not across_languages("", "es")
