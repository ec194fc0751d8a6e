"""The evidence memory: kept in the run store's database, recalled by entity and by similarity."""

from pathlib import Path

from pipelines.core.domain import Evidence
from pipelines.run.tools.embeddings import MiniLMEmbedder
from pipelines.run.tools.memory import EvidenceMemory, evidence_key, normalize_entity

BATS = Evidence(
    id="E1",
    source="corpus",
    corpus="check-covid",
    doc_id="asnvwu1u",
    passage_index=0,
    title="Bats and viruses",
    text="Bats dampen their innate immune response to cytosolic DNA, which lets them coexist with many viruses.",
    query="bats cytosolic DNA viruses",
)
MASKS = Evidence(
    id="E2",
    source="web",
    url="https://example.org/masks",
    title="Masks",
    text="Randomized trials found masks reduce transmission of respiratory viruses when worn consistently.",
    query="masks transmission",
)


def memory_at(tmp_path: Path, embedder: MiniLMEmbedder) -> EvidenceMemory:
    return EvidenceMemory.from_url(f"sqlite:///{tmp_path / 'runs.sqlite'}", embedder)


def test_kept_items_survive_a_new_connection_with_query_source_and_time(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    memory = memory_at(tmp_path, embedder)
    added, refreshed = memory.remember([BATS], claim="Bats fight viruses", topic="bats", entities=["Bats", "cytosolic DNA"])
    memory.remember([MASKS], claim="Masks work", topic="masks", entities=["masks"])

    recalled = memory_at(tmp_path, embedder).recall(text="Bats coexist with viruses", entities=["bats"], k=5, min_similarity=0.9)

    assert (added, refreshed) == (1, 0)
    assert [r.item.key for r in recalled] == [evidence_key(BATS)]
    item = recalled[0].item
    assert item.query == "bats cytosolic DNA viruses" and item.source == "corpus" and item.created_at > 0
    assert recalled[0].entity == "bats"


def test_recall_by_similarity_without_an_entity_match(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    memory = memory_at(tmp_path, embedder)
    memory.remember([BATS, MASKS], claim="c", topic="t", entities=["nothing in common"])

    recalled = memory.recall(text="Face masks cut the spread of respiratory viruses", entities=["face coverings"], k=5, min_similarity=0.5)

    assert [r.item.key for r in recalled] == ["web:https://example.org/masks"]
    assert recalled[0].entity is None and recalled[0].similarity >= 0.5


def test_an_entity_match_still_needs_the_entity_floor_of_similarity(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    # On a beat every claim of which names COVID-19, the entity alone recalled another claim's evidence at similarity 0.27.
    memory = memory_at(tmp_path, embedder)
    memory.remember([BATS, MASKS], claim="c", topic="t", entities=["viruses"])

    anything = memory.recall(text="Viruses mutate in the winter", entities=["viruses"], k=5, min_similarity=0.9)
    floored = memory.recall(text="Viruses mutate in the winter", entities=["viruses"], k=5, min_similarity=0.9, entity_similarity=0.5)
    similar = memory.recall(
        text="Face masks cut the spread of respiratory viruses", entities=["viruses"], k=5, min_similarity=0.9, entity_similarity=0.5
    )

    assert len(anything) == 2 and all(r.entity == "viruses" and r.similarity < 0.5 for r in anything)
    assert floored == []
    assert [r.item.key for r in similar] == ["web:https://example.org/masks"] and similar[0].entity == "viruses"
    stricter = memory.recall(
        text="Face masks cut the spread of respiratory viruses", entities=["viruses"], k=5, min_similarity=0.5, entity_similarity=0.99
    )
    assert [r.item.key for r in stricter] == ["web:https://example.org/masks"], "an entity match never asks more than no match"


def test_unrelated_claims_recall_nothing(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    memory = memory_at(tmp_path, embedder)
    memory.remember([BATS, MASKS], claim="c", topic="t", entities=["bats", "masks"])

    assert memory.recall(text="The Moon landings were filmed in a studio", entities=["Moon landings"], k=5, min_similarity=0.5) == []


def test_the_same_evidence_is_kept_once_and_gains_entities(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    memory = memory_at(tmp_path, embedder)
    memory.remember([BATS], claim="a", topic="t", entities=["bats"])

    added, refreshed = memory.remember([BATS.model_copy(update={"id": "E9"})], claim="b", topic="t", entities=["cytosolic DNA"])

    assert (added, refreshed) == (0, 1) and memory.count() == 1
    assert memory.recall(text="x", entities=["Cytosolic DNA"], k=5, min_similarity=1.1)


def test_entity_names_are_normalised() -> None:
    assert normalize_entity("  SARS-CoV-2, ") == normalize_entity("sars-cov-2") == "sars-cov-2"
