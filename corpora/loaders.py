"""Loaders for the corpora the app knows: the bundled demo, Check-COVID, and a user's files."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from corpora.base import Document, split_sentences
from corpora.formats import HTML_SUFFIXES, PDF_SUFFIXES, html_document, pdf_document
from corpora.jsonl import jsonl_objects
from corpora.uploads import CONTENT_SNIFF_BYTES, CorpusFileError, check_content

SUPPORTED_SUFFIXES = (".txt", ".md", ".jsonl", *PDF_SUFFIXES, *HTML_SUFFIXES)
MAX_FILE_BYTES = 50 * 1024 * 1024


@dataclass
class DemoLoader:
    """The small demo corpus written by the team, bundled with the app."""

    name: str = "demo"

    def load_documents(self) -> Iterator[Document]:
        text = resources.files("corpora.demo").joinpath("documents.jsonl").read_text(encoding="utf-8")
        for _, row in _jsonl_rows(text, "corpora/demo/documents.jsonl"):
            yield Document(id=row["id"], title=row["title"], sentences=split_sentences(row["text"]), source=row.get("source", "demo"))


@dataclass
class CheckCovidLoader:
    """Check-COVID's 347 abstracts, read from the dataset folder by path (never copied)."""

    folder: Path
    name: str = "check-covid"

    def load_documents(self) -> Iterator[Document]:
        path = self.folder / "corpus.json"
        if not path.is_file():
            raise CorpusFileError(f"no corpus.json in {self.folder}: point DEBATEDESK_CHECKCOVID_DIR at the Check-COVID folder")
        for _, row in _jsonl_rows(path.read_text(encoding="utf-8"), str(path)):
            yield Document(
                id=row["cord_id"],
                title=row["title"],
                sentences=tuple(s.strip() for s in row["abstract"]),
                source="Check-COVID / CORD-19",
            )


@dataclass
class FileLoader:
    """A user's .txt, .md, .jsonl, .pdf and .html files (JSONL rows need "text"; "id", "title", "url" are optional)."""

    paths: list[Path]
    name: str = "files"
    display_names: dict[Path, str] = field(default_factory=dict)

    def load_documents(self) -> Iterator[Document]:
        for path in self.paths:
            yield from self._load_file(path)

    def _load_file(self, path: Path) -> Iterator[Document]:
        shown = self.display_names.get(path, path.name)
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise CorpusFileError(f"{shown}: unsupported file type; use {', '.join(SUPPORTED_SUFFIXES)}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CorpusFileError(f"{shown}: larger than {MAX_FILE_BYTES // 2**20} MB; split it into smaller files")
        with path.open("rb") as head:
            check_content(shown, path.suffix.lower(), head.read(CONTENT_SNIFF_BYTES))
        if path.suffix.lower() in PDF_SUFFIXES:
            yield pdf_document(path, shown, CorpusFileError)
            return
        if path.suffix.lower() in HTML_SUFFIXES:
            yield html_document(path, shown, CorpusFileError)
            return
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusFileError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from exc
        if path.suffix.lower() == ".jsonl":
            if not text.strip():
                raise CorpusFileError(f'{shown}: the file is empty or blank; write one JSON object per line, with a "text" field')
            for number, row in _jsonl_rows(text, shown):
                body = row.get("text")
                if not isinstance(body, str) or not body.strip():
                    raise CorpusFileError(f'{shown} line {number}: needs a non-empty "text" field')
                yield Document(
                    id=str(row.get("id") or f"{path.stem}-{number}"),
                    title=str(row.get("title") or path.stem),
                    sentences=split_sentences(body),
                    source=shown,
                    url=row.get("url") if isinstance(row.get("url"), str) else None,
                )
            return
        if not text.strip():
            raise CorpusFileError(f"{shown}: the file is empty")
        title = _markdown_title(text)
        if title:  # the heading is the title; keep it out of the quotable sentences
            text = text.replace(f"# {title}", "", 1)
        yield Document(id=path.stem, title=title or path.stem, sentences=split_sentences(text), source=shown)


def _markdown_title(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def _jsonl_rows(text: str, where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line names its number."""
    return jsonl_objects(text, where, CorpusFileError)
