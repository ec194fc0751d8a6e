from pathlib import Path

import pytest

from corpora.loaders import CheckCovidLoader, CorpusFileError, DemoLoader, FileLoader
from tests.conftest import CHECK_COVID


def test_demo_corpus_is_bundled_and_well_formed() -> None:
    docs = list(DemoLoader().load_documents())
    assert 30 <= len(docs) <= 60
    assert len({d.id for d in docs}) == len(docs)
    assert all(d.title and len(d.sentences) >= 3 for d in docs)


@pytest.mark.skipif(not CHECK_COVID.is_dir(), reason="Check-COVID is not beside the repo")
def test_check_covid_loader_reads_all_abstracts_by_path() -> None:
    docs = list(CheckCovidLoader(CHECK_COVID).load_documents())
    assert len(docs) == 347
    assert all(d.sentences for d in docs)


def test_check_covid_loader_says_where_to_point_it(tmp_path: Path) -> None:
    with pytest.raises(CorpusFileError, match="DEBATEDESK_CHECKCOVID_DIR"):
        list(CheckCovidLoader(tmp_path).load_documents())


def test_file_loader_reads_txt_md_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Plain text. Two sentences.")
    (tmp_path / "b.md").write_text("# A heading\n\nBody text here.")
    (tmp_path / "c.jsonl").write_text('{"id": "x1", "title": "T", "text": "Row one.", "url": "https://e.org"}\n\n{"text": "Row two."}\n')
    docs = list(FileLoader(sorted(tmp_path.iterdir())).load_documents())
    assert [d.id for d in docs] == ["a", "b", "x1", "c-3"]
    assert docs[1].title == "A heading"
    assert docs[2].url == "https://e.org" and docs[2].source == "c.jsonl"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.jsonl", b'{"text": "ok"}\nnot json\n', "line 2: not valid JSON"),
        ("empty.jsonl", b'{"title": "no text"}\n', 'needs a non-empty "text"'),
        ("latin.txt", "caf\u00e9".encode("latin-1"), "not UTF-8"),
        ("empty.txt", b"   ", "empty"),
        ("doc.pdf", b"%PDF", "unsupported file type"),
    ],
)
def test_file_loader_refuses_broken_files_with_a_clear_message(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusFileError, match=message):
        list(FileLoader([path]).load_documents())
