from pathlib import Path

import pytest

from corpora.loaders import CheckCovidLoader, CorpusFileError, DemoLoader, FileLoader
from tests.conftest import CHECK_COVID
from tests.fakes import make_pdf


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
        ("doc.docx", b"PK", "unsupported file type"),
        ("doc.pdf", b"%PDF-1.4 then nothing", "not a readable PDF"),
        ("scan.pdf", make_pdf([""]), "no text layer"),
        ("page.html", b"<html><body><script>app()</script><nav>Home</nav></body></html>", "no readable text"),
    ],
)
def test_file_loader_refuses_broken_files_with_a_clear_message(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusFileError, match=message):
        list(FileLoader([path]).load_documents())


def test_a_pdf_is_read_page_after_page_with_its_title(tmp_path: Path) -> None:
    path = tmp_path / "mask-trial.pdf"
    path.write_bytes(
        make_pdf(["Surgical masks cut influenza trans-", "Cloth masks did less well. The trial ran in 2019."], title="Mask trial")
    )
    (doc,) = FileLoader([path], display_names={path: "Mask trial (final).pdf"}).load_documents()
    assert doc.title == "Mask trial" and doc.id == "mask-trial" and doc.source == "Mask trial (final).pdf"
    assert doc.sentences == ("Surgical masks cut influenza trans-", "Cloth masks did less well.", "The trial ran in 2019.")


def test_a_pdf_without_a_title_is_named_after_its_file_and_joins_hyphenated_lines(tmp_path: Path) -> None:
    from corpora.formats import _HYPHENATED

    path = tmp_path / "notes.pdf"
    path.write_bytes(make_pdf(["One page of notes."]))
    (doc,) = FileLoader([path]).load_documents()
    assert doc.title == "notes" and doc.sentences == ("One page of notes.",)
    assert _HYPHENATED.sub(r"\1\2", "trans-\nmission") == "transmission"


def test_a_password_protected_pdf_is_refused_with_what_to_do(tmp_path: Path) -> None:
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf(["Secret text."]))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as f:
        writer.write(f)
    with pytest.raises(CorpusFileError, match="locked.pdf: the PDF is (password-protected|encrypted)"):
        list(FileLoader([path]).load_documents())


def test_an_html_page_keeps_its_article_title_and_address_and_drops_the_menus(tmp_path: Path) -> None:
    path = tmp_path / "article.html"
    path.write_text(
        """<!doctype html><html><head><meta charset="utf-8"><title>Masks &amp; buses — The Daily</title>
        <link rel="canonical" href="https://news.example.org/masks-buses">
        <script>var tracking = "Masks are great.";</script><style>p { color: red }</style></head>
        <body><header>The Daily</header><nav><a href="/">Home</a> <a href="/x">Sports</a></nav>
        <article><h1>Masks &amp; buses</h1><p>Riders who wore <a href="/m">masks</a> fell ill less often.</p>
        <p>The study ran for <em>two</em> winters.<br>It covered 40 routes.</p></article>
        <aside>Related: celebrity news</aside><footer>© The Daily</footer></body></html>""",
        encoding="utf-8",
    )
    (doc,) = FileLoader([path]).load_documents()
    assert doc.title == "Masks & buses — The Daily" and doc.url == "https://news.example.org/masks-buses"
    assert doc.sentences == (
        "Masks & buses",
        "Riders who wore masks fell ill less often.",
        "The study ran for two winters.",
        "It covered 40 routes.",
    )
    assert not any(word in doc.text for word in ("tracking", "Sports", "celebrity", "color", "©"))


def test_an_html_page_in_its_own_charset_without_a_canonical_web_address(tmp_path: Path) -> None:
    path = tmp_path / "alt.htm"
    page = '<html><head><meta charset="windows-1252"><link rel="canonical" href="javascript:alert(1)"></head><body><h1>Caf\u00e9 claims</h1><p>Coffee is fine.</p></body></html>'
    path.write_bytes(page.encode("cp1252"))
    (doc,) = FileLoader([path]).load_documents()
    assert doc.title == "Café claims" and doc.sentences == ("Coffee is fine.",) and doc.url is None
