from pathlib import Path

import pytest

from corpora.chunking import chunk_documents
from corpora.loaders import FileLoader
from pipelines.config import AppSettings
from pipelines.errors import UnknownCorpusError
from pipelines.tools.corpus_index import CorpusIndex, validate_corpus_name


@pytest.fixture
def index(tmp_path: Path, embedder) -> CorpusIndex:  # type: ignore[no-untyped-def]
    return CorpusIndex(AppSettings(data_dir=tmp_path), embedder)


def notes(tmp_path: Path) -> list:  # type: ignore[type-arg]
    path = tmp_path / "notes.txt"
    path.write_text("The Eiffel Tower is about 330 metres tall. It grows in summer heat. Iron expands when warm. It was finished in 1889.")
    return list(chunk_documents(FileLoader([path]).load_documents()))


def test_ingesting_the_same_file_twice_does_not_duplicate(index: CorpusIndex, tmp_path: Path) -> None:
    first = index.ingest("notes", notes(tmp_path))
    second = index.ingest("notes", notes(tmp_path))
    assert first.added == 2 and second.added == 0 and second.already_present == 2
    assert index.corpora()["notes"] == {"passages": 2, "documents": 1}


def test_search_finds_by_meaning_and_keeps_sentence_indices(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    hit = index.search("notes", "How tall is the Eiffel Tower?", k=1)[0]
    assert hit.passage.sentence_indices == (0, 1, 2)
    assert hit.passage.doc_id == "notes" and 0 < hit.score <= 1 and hit.scores["dense"] == hit.score


def test_delete_and_unknown_corpus(index: CorpusIndex, tmp_path: Path) -> None:
    index.ingest("notes", notes(tmp_path))
    index.delete("notes")
    with pytest.raises(UnknownCorpusError, match="unknown corpus 'notes'"):
        index.search("notes", "anything")


@pytest.mark.parametrize("bad", ["", "Has Space", "../etc", "x" * 80])
def test_corpus_names_are_validated(bad: str) -> None:
    with pytest.raises(ValueError, match="corpus name"):
        validate_corpus_name(bad)
