from corpora.base import Document, split_sentences
from corpora.chunking import chunk_document


def doc(n: int) -> Document:
    return Document(id="d", title="Title", sentences=tuple(f"Sentence {i}." for i in range(n)))


def test_passages_overlap_and_keep_sentence_indices() -> None:
    passages = list(chunk_document(doc(6), sentences=3, overlap=1))
    assert [p.sentence_indices for p in passages] == [(0, 1, 2), (2, 3, 4), (4, 5)]
    assert passages[1].text == "Sentence 2. Sentence 3. Sentence 4."
    assert [p.id for p in passages] == ["d#p0", "d#p1", "d#p2"]


def test_title_is_prepended_to_what_is_indexed_not_to_the_quote() -> None:
    passage = next(chunk_document(doc(2)))
    assert passage.indexed_text.startswith("Title. ")
    assert not passage.text.startswith("Title")


def test_short_and_empty_documents() -> None:
    assert [p.sentence_indices for p in chunk_document(doc(1))] == [(0,)]
    assert [p.sentence_indices for p in chunk_document(doc(3))] == [(0, 1, 2)]
    assert list(chunk_document(doc(0))) == []


def test_bad_window_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="overlap"):
        list(chunk_document(doc(3), sentences=2, overlap=2))


def test_split_sentences_keeps_abbreviations_and_numbers_together() -> None:
    assert split_sentences("Masks work. They cut spread by 3.5 percent! Really?") == (
        "Masks work.",
        "They cut spread by 3.5 percent!",
        "Really?",
    )
    assert split_sentences("First line\n\nSecond paragraph.") == ("First line", "Second paragraph.")
