"""A checker's PDF and HTML files as documents: text through pypdf and BeautifulSoup, refusals that say what to do instead."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from corpora.base import Document, split_sentences

PDF_SUFFIXES = (".pdf",)
HTML_SUFFIXES = (".html", ".htm")
# Not the page's content: menus, scripts, forms, the page's own header and footer.
_HTML_NOISE = ("script", "style", "noscript", "template", "svg", "canvas", "nav", "footer", "header", "aside", "form", "iframe", "object")
_HTML_BLOCKS = (
    "p",
    "div",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "section",
    "article",
    "tr",
    "dd",
    "dt",
    "figcaption",
)
_HYPHENATED = re.compile(r"(\w)-\n(\w)")


def pdf_document(path: Path, shown: str, error: type[ValueError]) -> Document:
    """The PDF's text, page after page; ``error`` (the loader's CorpusFileError) names the file and the fix."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, PdfReadError, PyPdfError

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):  # many PDFs are "encrypted" with an empty password
            raise error(f"{shown}: the PDF is password-protected; save a copy without a password and upload that")
        pages = [_page_text(page) for page in reader.pages]
        title = str((reader.metadata.title if reader.metadata else None) or "").strip()
    except error:
        raise
    except (LimitReachedError, RecursionError, MemoryError) as exc:  # pypdf stops a decompression or page-tree bomb
        raise error(
            f"{shown}: the PDF is built to overwhelm a reader (it expands beyond pypdf's limits or its pages loop: "
            f"{str(exc)[:120] or exc.__class__.__name__}); it was not read. Print it to a new PDF, or upload its text"
        ) from exc
    except (FileNotDecryptedError, DependencyError) as exc:
        raise error(f"{shown}: the PDF is encrypted ({exc}); save a copy without a password and upload that") from exc
    # pypdf reports a damaged or truncated file with these (its own PdfReadError, or a parser's lookup that failed).
    except (PdfReadError, PyPdfError, ValueError, KeyError, IndexError, TypeError, AttributeError, AssertionError) as exc:
        raise error(
            f"{shown}: not a readable PDF ({exc.__class__.__name__}: {str(exc)[:200]}); open and re-save it, or upload its text"
        ) from exc
    text = "\n\n".join(_HYPHENATED.sub(r"\1\2", page).strip() for page in pages if page.strip())
    if not text:
        raise error(f"{shown}: the PDF has no text layer (a scanned image?); run it through OCR first, or upload its text")
    return Document(id=path.stem, title=title or path.stem, sentences=split_sentences(text), source=shown)


def _page_text(page: Any) -> str:
    # Decoded first, so a content stream that inflates past pypdf's limit raises here (extract_text would swallow it).
    contents = page.get_contents()
    if contents is not None:
        contents.get_data()
    return str(page.extract_text() or "")


def html_document(path: Path, shown: str, error: type[ValueError]) -> Document:
    """A saved web page's readable text (the article or main part when the page marks one), its title and its address."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_bytes(), "html.parser")  # bytes: the page's own charset is honoured
    title = " ".join((soup.title.get_text() if soup.title else "").split())
    url = _page_url(soup)
    for tag in soup(list(_HTML_NOISE)):
        tag.decompose()
    body = soup.find("article") or soup.find("main") or soup.body or soup
    for tag in body.find_all(list(_HTML_BLOCKS)):
        tag.append("\n\n")  # a block ends a sentence; inline tags (links, emphasis) stay inside theirs
    for br in body.find_all("br"):
        br.replace_with("\n")
    sentences = split_sentences(body.get_text())
    heading = soup.find("h1")
    title = title or (" ".join(heading.get_text().split()) if heading else "")
    if sentences and title and sentences[0] == title:
        sentences = sentences[1:]  # the heading is the title; keep it out of the quotable sentences
    if not sentences:
        raise error(f"{shown}: no readable text in this page (is it built by JavaScript?); save it as text or PDF and upload that")
    return Document(id=path.stem, title=title or path.stem, sentences=sentences, source=shown, url=url)


def _page_url(soup: object) -> str | None:
    """Where the page was published (its canonical link or og:url), when that is a web address."""
    from bs4 import BeautifulSoup, Tag

    assert isinstance(soup, BeautifulSoup)
    for found in (soup.find("link", rel="canonical"), soup.find("meta", property="og:url")):
        if isinstance(found, Tag):
            value = str(found.get("href") or found.get("content") or "").strip()
            parts = urlsplit(value)
            if parts.scheme in ("http", "https") and parts.netloc:
                return value
    return None
