import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpora.chunking import chunk_documents
from corpora.loaders import FileLoader
from pipelines.core.config import AppSettings
from pipelines.core.errors import UnknownCorpusError
from pipelines.run.tools.corpus_index import CorpusIndex, SearchMode, validate_corpus_name
from pipelines.run.tools.embeddings import Embedder


@pytest.fixture
def index(tmp_path: Path, embedder) -> CorpusIndex:  # type: ignore[no-untyped-def]
    return CorpusIndex(AppSettings(data_dir=tmp_path), embedder)


def notes(tmp_path: Path) -> list:  # type: ignore[type-arg]
    path = tmp_path / "notes.txt"
    path.write_text("The Eiffel Tower is about 330 metres tall. It grows in summer heat. Iron expands when warm. It was finished in 1889.")
    return list(chunk_documents(FileLoader([path]).load_documents()))


def library(tmp_path: Path) -> list:  # type: ignore[type-arg]
    """Three short documents: one on bridges, one on vaccines, one on bread."""
    rows = [
        ("bridges", "Suspension bridges", "The Golden Gate Bridge opened in 1937. Its main span is 1,280 metres long."),
        ("vaccines", "Vaccination", "Vaccines train the immune system. Vaccinated people fall ill less often with measles."),
        ("bread", "Baking", "Sourdough bread rises with wild yeast. Bakers keep a starter alive for years."),
    ]
    path = tmp_path / "library.jsonl"
    path.write_text("\n".join(json.dumps({"id": i, "title": t, "text": x}) for i, t, x in rows))
    return list(chunk_documents(FileLoader([path]).load_documents()))


def lexical_ids(index: CorpusIndex, corpus: str) -> list[str]:
    return json.loads((index.lexical_path(corpus) / "passages.json").read_text())["ids"]


def test_ingesting_the_same_file_twice_duplicates_nothing_in_either_index(index: CorpusIndex, tmp_path: Path) -> None:
    first = index.ingest("notes", notes(tmp_path))
    second = index.ingest("notes", notes(tmp_path))
    assert first.added == 2 and second.added == 0 and second.already_present == 2
    assert index.corpora()["notes"] == {"passages": 2, "documents": 1}
    assert sorted(lexical_ids(index, "notes")) == ["notes#p0", "notes#p1"]
    assert len(index.search("notes", "Eiffel Tower", k=5, mode="lexical")) == 1  # one document, found once


def test_search_finds_by_meaning_and_keeps_sentence_indices(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    hit = index.search("notes", "How tall is the Eiffel Tower?", k=1, mode="dense")[0]
    assert hit.passage.sentence_indices == (0, 1, 2) and hit.passage.index == 0
    assert hit.passage.doc_id == "notes" and 0 < hit.score <= 1 and hit.scores == {"dense": hit.score}


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_every_mode_ranks_the_matching_document_first_with_its_scores(index: CorpusIndex, tmp_path: Path, mode: SearchMode) -> None:
    index.ingest("lib", library(tmp_path))
    hits = index.search("lib", "Are vaccinated people less often ill?", k=3, mode=mode)
    assert hits[0].passage.doc_id == "vaccines"
    expected = {"hybrid": {"dense", "lexical", "fused"}, "dense": {"dense"}, "lexical": {"lexical"}}[mode]
    assert set(hits[0].scores) == expected
    assert hits[0].score == hits[0].scores["fused" if mode == "hybrid" else mode]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.passage.doc_id for h in hits}) == len(hits)  # one hit per document


def test_hybrid_finds_a_word_match_that_meaning_alone_ranks_low(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("lib", library(tmp_path))
    hit = index.search("lib", "1,280 metres 1937", k=1)[0]
    assert hit.passage.doc_id == "bridges" and hit.scores["lexical"] > 0 and 0 <= hit.scores["fused"] <= 1


def test_several_queries_are_searched_together(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("lib", library(tmp_path))
    hits = index.search("lib", ["sourdough starter", "wild yeast bread"], k=1)
    assert hits[0].passage.doc_id == "bread"
    assert index.search("lib", ["", "  "], k=1) == []


def test_a_missing_or_stale_lexical_index_is_rebuilt_from_the_collection(index: CorpusIndex, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    index.ingest("lib", library(tmp_path))
    shutil.rmtree(index.lexical_path("lib"))  # e.g. a data folder from before lexical search existed
    fresh = CorpusIndex(AppSettings(data_dir=tmp_path), embedder)
    assert fresh.search("lib", "sourdough", k=1, mode="lexical")[0].passage.doc_id == "bread"
    assert index.lexical_path("lib").is_dir()
    more = tmp_path / "more.txt"
    more.write_text("Rye bread is dense. Pumpernickel bakes for a whole day.")
    fresh.ingest("lib", chunk_documents(FileLoader([more]).load_documents()))  # another process adds a document
    assert index.search("lib", "pumpernickel", k=1, mode="lexical")[0].passage.doc_id == "more"


def test_unknown_search_mode_is_refused(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    with pytest.raises(ValueError, match="choose one of: hybrid, dense, lexical"):
        index.search("notes", "x", mode="fuzzy")  # type: ignore[arg-type]


def test_deleting_a_corpus_removes_both_indexes(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    assert index.lexical_path("notes").is_dir()
    index.delete("notes")
    assert not index.lexical_path("notes").exists()
    assert "notes" not in index.corpora()
    with pytest.raises(UnknownCorpusError, match="unknown corpus 'notes'"):
        index.search("notes", "anything")


@pytest.mark.parametrize("bad", ["", "Has Space", "../etc", "x" * 80])
def test_corpus_names_are_validated(bad: str) -> None:
    with pytest.raises(ValueError, match="corpus name"):
        validate_corpus_name(bad)


def test_a_document_only_one_signal_proposed_still_gets_its_text_and_both_scores(
    index: CorpusIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.run.tools import corpus_index

    monkeypatch.setattr(corpus_index, "CANDIDATES", 1)  # each signal proposes one passage: the fused list mixes them
    index.ingest("lib", library(tmp_path))
    codes = tmp_path / "codes.txt"
    codes.write_text("The door code is quokka7. Nobody else knows it.")
    index.ingest("lib", chunk_documents(FileLoader([codes]).load_documents()))
    # Only BM25 knows "quokka7"; only meaning links "shots against infectious disease" to vaccines.
    hits = index.search("lib", "quokka7 shots that protect against infectious disease", k=3)
    assert {h.passage.doc_id for h in hits} == {"codes", "vaccines"}
    assert all(h.passage.text and "dense" in h.scores and "lexical" in h.scores for h in hits)


# Another process changes the corpus: a script run with a stand-in embedder (no model to load).
OTHER_PROCESS = """
import sys, zlib
from pathlib import Path
import numpy as np
from corpora.chunking import chunk_documents
from corpora.loaders import FileLoader
from pipelines.core.config import AppSettings
from pipelines.run.tools.corpus_index import CorpusIndex

class Hashed:
    name, dimension = "hashed", 384
    def embed(self, texts):
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384) for t in texts]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32)

data_dir, action, corpus = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
index = CorpusIndex(AppSettings(data_dir=data_dir), Hashed())
if action == "delete":
    index.delete(corpus)
else:
    index.ingest(corpus, chunk_documents(FileLoader([Path(action)]).load_documents()))
"""


def in_another_process(data_dir: Path, action: str, corpus: str) -> None:
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(data_dir), action, corpus], cwd=root, check=True, timeout=300)


def test_a_corpus_deleted_by_another_process_is_unknown_at_the_next_search(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    assert index.search("notes", "Eiffel Tower", k=1)
    in_another_process(tmp_path, "delete", "notes")
    assert not index.has("notes") and index.count("notes") == 0
    for mode in ("hybrid", "dense", "lexical"):
        with pytest.raises(UnknownCorpusError, match="unknown corpus 'notes'"):
            index.search("notes", "Eiffel Tower", mode=mode)  # type: ignore[arg-type]


def test_passages_rewritten_by_another_process_are_searched_as_they_are_now(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    assert "330 metres" in index.search("notes", "Eiffel Tower height", k=1, mode="lexical")[0].passage.text
    # The same file with other words: same passage ids, same count; only the revision tells.
    (tmp_path / "notes.txt").write_text(
        "The Eiffel Tower is painted bronze. Painters climb it every seven years. Paint protects iron. It needs sixty tonnes."
    )
    in_another_process(tmp_path, str(tmp_path / "notes.txt"), "notes")
    assert index.count("notes") == 2
    hit = index.search("notes", "bronze", k=1, mode="lexical")[0]
    assert "bronze" in hit.passage.text and hit.scores["lexical"] > 0
    for mode in ("hybrid", "dense"):
        assert "330 metres" not in index.search("notes", "Eiffel Tower", k=1, mode=mode)[0].passage.text  # type: ignore[arg-type]


def test_a_search_neither_lists_corpora_nor_counts_passages(index: CorpusIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Listing every collection and counting one (a scan of its passages) cost more than the rest of a search at 10,000 passages.
    index.ingest("lib", library(tmp_path))
    index.ingest("notes", notes(tmp_path))
    calls = {"list": 0, "count": 0}
    client, collection_type = index._client, type(index._collection("lib"))
    listing, counting = client.list_collections, collection_type.count
    monkeypatch.setattr(client, "list_collections", lambda *a, **kw: calls.__setitem__("list", calls["list"] + 1) or listing(*a, **kw))
    monkeypatch.setattr(collection_type, "count", lambda self: calls.__setitem__("count", calls["count"] + 1) or counting(self))
    for mode in ("hybrid", "dense", "lexical"):
        assert index.search("lib", "sourdough starter", k=2, mode=mode)  # type: ignore[arg-type]
    assert calls == {"list": 0, "count": 0}


def test_passages_of_an_ingestion_cut_short_are_searched_until_it_is_finished(
    index: CorpusIndex, tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from pipelines.run.tools import corpus_index

    index.ingest("lib", library(tmp_path))
    assert index.search("lib", "sourdough", k=1, mode="lexical")[0].passage.doc_id == "bread"  # its BM25 index is now cached
    codes = tmp_path / "codes.txt"
    codes.write_text("The door code is quokka7. Nobody else knows it.")
    other = CorpusIndex(AppSettings(data_dir=tmp_path), embedder)  # as another process would
    write_batch = corpus_index.CorpusIndex._add_batch

    def write_then_die(self: CorpusIndex, *args: object, **kwargs: object) -> tuple[int, int]:
        write_batch(self, *args, **kwargs)  # type: ignore[arg-type]
        raise KeyboardInterrupt  # cut short after its first batch, before the final revision

    monkeypatch.setattr(corpus_index.CorpusIndex, "_add_batch", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        other.ingest("lib", chunk_documents(FileLoader([codes]).load_documents()))
    monkeypatch.undo()
    assert index._collection("lib").metadata["revision"].startswith(corpus_index.PENDING)
    for mode in ("lexical", "hybrid"):
        assert index.search("lib", "quokka7", k=1, mode=mode)[0].passage.doc_id == "codes"  # type: ignore[arg-type]
    other.ingest("lib", chunk_documents(FileLoader([codes]).load_documents()))  # adds nothing, but finishes the revision
    assert not index._collection("lib").metadata["revision"].startswith(corpus_index.PENDING)
    assert index.search("lib", "quokka7", k=1, mode="lexical")[0].passage.doc_id == "codes"


def test_a_dense_candidate_the_bm25_index_lacks_still_gets_its_document(index: CorpusIndex, tmp_path: Path) -> None:
    from pipelines.run.tools.lexical import LexicalIndex

    index.ingest("lib", library(tmp_path))
    full = index._lexical_index("lib", index._collection("lib"), index._collection("lib").metadata["revision"])
    keep = [i for i, doc in enumerate(full.doc_ids) if doc != "vaccines"]  # as if written after the index was built
    index._lexical["lib"] = LexicalIndex.build(
        [full.ids[i] for i in keep], [full.doc_ids[i] for i in keep], [["bridg"], ["bread"]][: len(keep)], full.revision
    )
    hit = index.search("lib", "Are vaccinated people less often ill?", k=1, mode="dense")[0]
    assert hit.passage.doc_id == "vaccines" and "measles" in hit.passage.text


# --- Listing and deleting documents (the Corpora page)


def test_documents_are_listed_by_title_with_their_passages(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("lib", library(tmp_path))
    docs = index.documents("lib")
    assert [(d.title, d.id, d.source, d.passages) for d in docs] == [
        ("Baking", "bread", "library.jsonl", 1),
        ("Suspension bridges", "bridges", "library.jsonl", 1),
        ("Vaccination", "vaccines", "library.jsonl", 1),
    ]
    with pytest.raises(UnknownCorpusError, match="unknown corpus 'nope'"):
        index.documents("nope")


def test_deleting_documents_removes_them_from_both_indexes_and_the_counts(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("lib", library(tmp_path))
    report = index.delete_documents("lib", ["vaccines", "not-there"])
    assert (report.documents, report.passages, report.corpus_removed) == (1, 1, False)
    assert [d.id for d in index.documents("lib")] == ["bread", "bridges"]
    assert index.corpora()["lib"] == {"passages": 2, "documents": 2}
    assert sorted(lexical_ids(index, "lib")) == ["bread#p0", "bridges#p0"]
    for mode in ("dense", "lexical", "hybrid"):
        assert all(h.passage.doc_id != "vaccines" for h in index.search("lib", "vaccines measles immune", k=3, mode=mode))  # type: ignore[arg-type]
    assert index.delete_documents("lib", ["vaccines"]).documents == 0  # already gone: nothing to do


def test_deleting_every_document_removes_the_corpus(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("lib", library(tmp_path))
    report = index.delete_documents("lib", ["bread", "bridges", "vaccines"])
    assert report.corpus_removed and report.documents == 3
    assert "lib" not in index.corpora() and not index.lexical_path("lib").exists()


class RecordingEmbedder:
    """The real embedder, recording the texts of each call."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def test_an_ingestion_embeds_shortest_first_in_steps_and_writes_in_the_files_order(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.run.tools import corpus_index

    monkeypatch.setattr(corpus_index, "EMBED_STEP", 4)
    recording = RecordingEmbedder(embedder)
    index = CorpusIndex(AppSettings(data_dir=tmp_path / "data"), recording)
    path = tmp_path / "facts.jsonl"
    lengths = [9, 2, 7, 1, 8, 3, 6, 4, 5, 10]  # words of a one-sentence passage: every length, in no order
    path.write_text("\n".join(json.dumps({"id": f"d{i}", "text": "The tide" + " rose" * n + "."}) for i, n in enumerate(lengths)))
    passages = list(chunk_documents(FileLoader([path]).load_documents()))
    seen: list[tuple[int, int]] = []

    report = index.ingest("tides", passages, batch_size=6, progress=lambda done, total: seen.append((done, total)))

    assert report.added == len(passages) == 10
    # Batches of 6 and 4 passages, each embedded shortest first in equal steps (3 and 3, then 4), not 4 and 2.
    assert [len(c) for c in recording.calls] == [3, 3, 4]
    first_batch = sorted((p.indexed_text for p in passages[:6]), key=len)
    assert recording.calls[0] + recording.calls[1] == first_batch
    assert seen == [(3, 10), (6, 10), (10, 10)]
    assert lexical_ids(index, "tides") == [p.id for p in passages], "written in the file's order"
    stored = index._collection("tides").get(ids=[passages[3].id], include=["embeddings"])["embeddings"][0]
    assert np.asarray(stored) == pytest.approx(embedder.embed([passages[3].indexed_text])[0], abs=1e-5)


def test_re_ingesting_unchanged_passages_embeds_nothing_and_reports_them_done(tmp_path: Path, embedder: Embedder) -> None:
    recording = RecordingEmbedder(embedder)
    index = CorpusIndex(AppSettings(data_dir=tmp_path / "data"), recording)
    index.ingest("lib", library(tmp_path))
    recording.calls.clear()
    seen: list[tuple[int, int]] = []

    report = index.ingest("lib", library(tmp_path), progress=lambda done, total: seen.append((done, total)))

    assert (report.added, report.already_present) == (0, 3) and recording.calls == []
    assert seen == [(3, 3)]
