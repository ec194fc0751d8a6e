"""Every upload and name answered plainly: bombs, odd names, same-named files, content that is not what its extension says."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from corpora.chunking import chunk_documents
from corpora.loaders import CorpusFileError, FileLoader
from corpora.uploads import stage_uploads
from pipelines.core.errors import InvalidClaimError, UnstorableTextError
from pipelines.record.store import RunFilter, RunStore
from pipelines.run.runner import validate_claim
from pipelines.run.tools.corpus_index import validate_corpus_name
from tests.fakes import make_pdf
from tests.stores import store_url  # noqa: F401  (the fixture)


def pdf_of(objects: list[str | bytes]) -> bytes:
    """A PDF from raw object bodies (object 1 the catalog), with a correct cross-reference table."""
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        raw = body if isinstance(body, bytes) else body.encode("latin-1")
        out += f"{number} 0 obj\n".encode() + raw + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def page_tree_bomb() -> bytes:
    """One page under 300 nested /Pages nodes: a reader that follows them recursively runs out of stack."""
    nodes = [f"<< /Type /Pages /Kids [{n + 1} 0 R] /Count 1 >>" for n in range(2, 302)]
    return pdf_of(["<< /Type /Catalog /Pages 2 0 R >>", *nodes, "<< /Type /Page /Parent 301 0 R >>"])


def decompression_bomb() -> bytes:
    """A page whose 200 KB content stream inflates to 200 MB of zeros."""
    packed = zlib.compress(b"0" * 200_000_000, 9)
    stream = f"<< /Length {len(packed)} /Filter /FlateDecode >>\nstream\n".encode() + packed + b"\nendstream"
    return pdf_of(
        [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            stream,
        ]
    )


def read(tmp_path: Path, uploads: list[tuple[str, bytes]]) -> list[object]:
    paths, shown, _ = stage_uploads(uploads, tmp_path)
    return list(FileLoader(paths, display_names=shown).load_documents())


@pytest.mark.parametrize(("bomb", "name"), [(page_tree_bomb, "tree.pdf"), (decompression_bomb, "zip.pdf")])
def test_a_pdf_bomb_gets_a_plain_message(tmp_path: Path, bomb: object, name: str) -> None:
    with pytest.raises(CorpusFileError, match=f"{name}: the PDF is built to overwhelm a reader"):
        read(tmp_path, [(name, bomb())])  # type: ignore[operator]


def test_a_304_character_file_name_gets_a_plain_message(tmp_path: Path) -> None:
    with pytest.raises(CorpusFileError, match="the file name is 304 characters"):
        read(tmp_path, [("n" * 300 + ".txt", b"Masks help.")])


def test_a_nul_in_a_file_name_gets_a_plain_message(tmp_path: Path) -> None:
    with pytest.raises(CorpusFileError, match=r"a\\x00b.txt: the file name holds a control character \(U\+0000\)"):
        read(tmp_path, [("a\x00b.txt", b"Masks help.")])


def test_two_different_files_of_one_name_are_both_kept_and_the_person_told(tmp_path: Path) -> None:
    paths, shown, notes = stage_uploads(
        [("notes.txt", b"Masks help."), ("notes.txt", b"Masks do not help."), ("notes.txt", b"Masks help.")], tmp_path
    )
    docs = list(FileLoader(paths, display_names=shown).load_documents())
    assert sorted(shown.values()) == ["notes (2).txt", "notes.txt"]
    assert {d.id for d in docs} == {"notes", "notes (2)"}
    assert notes == [
        "two different files are named notes.txt; the later one is kept as notes (2).txt",
        "notes.txt was uploaded twice with the same content; it is read once",
    ]


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("page.html", make_pdf(["Masks help."]), "the file is a PDF, not .html text"),
        ("page.html", b"<html>\x00\x01\x02\x00binary</html>", "binary content"),
        ("notes.txt", b"\x89PNG\r\n\x1a\n....", "a PNG image"),
        ("paper.pdf", b"<html><body>not a pdf</body></html>", "not a PDF"),
    ],
)
def test_content_is_checked_against_its_extension(tmp_path: Path, name: str, data: bytes, said: str) -> None:
    with pytest.raises(CorpusFileError, match=said):
        read(tmp_path, [(name, data)])


@pytest.mark.parametrize("text", [b"", b"\n  \n\t\n"])
def test_an_empty_or_blank_jsonl_is_refused_before_a_corpus_is_made(tmp_path: Path, text: bytes) -> None:
    with pytest.raises(CorpusFileError, match="rows.jsonl: the file is empty or blank"):
        list(chunk_documents(read(tmp_path, [("rows.jsonl", text)])))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["x..y", "x.", "notes-"])
def test_a_corpus_name_a_collection_cannot_take_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="no two dots in a row, and end with a letter or digit"):
        validate_corpus_name(name)


@pytest.mark.parametrize("blank", ["\u2800", "\u3164", "\u115f", "\u1160", "\uffa0", "\u2800 \u3164\u115f", "\u17b4\u17b5"])
def test_blank_looking_letters_do_not_pass_as_a_claim(blank: str) -> None:
    with pytest.raises(InvalidClaimError, match="no visible characters"):
        validate_claim(blank)


def test_a_nul_in_a_name_gets_a_plain_message_on_every_database(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    try:
        with pytest.raises(UnstorableTextError, match="NUL character") as caught:
            store.create_run("r1", "Masks help", "single", {}, by="Ana\x00Lee")
        assert "INSERT" not in str(caught.value)
        assert store.list_runs(where=RunFilter(claim="Mask\x00")) == []  # a search with one finds nothing, plainly
    finally:
        store.engine.dispose()


def test_hashing_an_empty_password_gets_a_plain_message() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pipelines.newsroom.access.users", "hash"],
        input="\n\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    assert "the password is empty" in done.stderr and "Traceback" not in done.stderr
