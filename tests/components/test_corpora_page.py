"""AppTest: the Corpora page adds text, PDF and HTML files and shows the new corpus at once; lists, finds, searches and
deletes documents; refuses bad files and half-confirmed deletions with a message and loses nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pipelines.core.text.safety import escape_markdown
from tests.components.conftest import fake_app
from tests.fakes import make_pdf

PAGE = "pages/corpora.py"
K = "corpora."
ROWS = [
    ("bridges", "Suspension bridges", "The Golden Gate Bridge opened in 1937. Its main span is 1,280 metres long."),
    (
        "vaccines",
        "Vaccination **works** ![x](https://evil.example/p.png)",
        "Vaccines train the immune system. Vaccinated people fall ill less often with measles.",
    ),
    ("bread", "Baking", "Sourdough bread rises with wild yeast. Bakers keep a starter alive for years."),
]
LIBRARY = "\n".join(json.dumps({"id": i, "title": t, "text": x}) for i, t, x in ROWS).encode()
PAGE_HTML = b"""<html><head><title>Masks on buses</title><link rel="canonical" href="https://news.example.org/buses"></head>
<body><nav>Home | Sports</nav><article><p>Riders who wore masks fell ill less often.</p></article></body></html>"""


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTest:
    at = fake_app(monkeypatch, tmp_path / "data", timeout=180)
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def ingest(at: AppTest, corpus: str, *files: tuple[str, bytes, str]) -> AppTest:
    next(t for t in at.text_input if t.label == "Corpus name").input(corpus)
    at.file_uploader[0].set_value(list(files))
    next(b for b in at.button if b.label == "Ingest").click().run()
    assert not at.exception
    return at


def overview(at: AppTest) -> dict[str, int]:
    frame = at.dataframe[0].value
    return dict(zip(frame["corpus"], frame["documents"], strict=True))


def listed(at: AppTest) -> list[str]:
    return list(at.dataframe[1].value["id"])


def test_files_of_every_kind_make_a_corpus_that_shows_at_once(app: AppTest) -> None:
    ingest(
        app,
        "my-notes",
        ("library.jsonl", LIBRARY, "application/json"),
        ("trial.pdf", make_pdf(["Surgical masks cut influenza. Cloth masks did less well."], title="Mask trial"), "application/pdf"),
        ("buses.html", PAGE_HTML, "text/html"),
    )
    assert any("my-notes: 5 documents" in s.value for s in app.success)
    assert overview(app)["my-notes"] == 5  # in the table on the same run, no reload
    assert app.selectbox(key=K + "browse").value == "my-notes"
    frame = app.dataframe[1].value
    assert set(frame["id"]) == {"bridges", "vaccines", "bread", "trial", "buses"}
    buses = frame[frame["id"] == "buses"].iloc[0]
    assert buses["title"] == "Masks on buses" and buses["link"] == "https://news.example.org/buses"
    assert frame[frame["id"] == "trial"].iloc[0]["title"] == "Mask trial"


def test_a_bad_file_is_refused_with_its_name_and_nothing_is_added(app: AppTest) -> None:
    ingest(app, "my-notes", ("library.jsonl", LIBRARY, "application/json"))
    ingest(app, "my-notes", ("scan.pdf", make_pdf([""]), "application/pdf"), ("more.txt", b"More text here.", "text/plain"))
    errors = " ".join(e.value for e in app.error)
    assert escape_markdown("scan.pdf: the PDF has no text layer") in errors and "Nothing was added" in errors
    assert overview(app)["my-notes"] == 3  # the earlier ingestion is untouched, the good file of this one not half-added


def delete_list(app: AppTest):  # type: ignore[no-untyped-def]
    return next(m for m in app.multiselect if m.label == "Documents to delete")


def delete_box(app: AppTest):  # type: ignore[no-untyped-def]
    return next(c for c in app.checkbox if c.label == "Yes, delete them from this corpus")


def test_find_search_and_delete_documents(app: AppTest) -> None:
    ingest(app, "my-notes", ("library.jsonl", LIBRARY, "application/json"))
    app.text_input(key=K + "find").input("bridges").run()
    assert listed(app) == ["bridges"]
    app.text_input(key=K + "find").input("").run()

    app.text_input(key=K + "search").input("measles immune system").run()
    results = [m.value for m in app.markdown if m.value.startswith("**1.")]
    assert results and escape_markdown("Vaccination **works** ![x](https://evil.example/p.png)") in results[0]  # text, never markup

    delete_list(app).select("vaccines")
    next(b for b in app.button if b.label == "Delete").click().run()
    assert any("Tick" in e.value and "nothing was deleted" in e.value for e in app.error)
    assert sorted(listed(app)) == ["bread", "bridges", "vaccines"]

    delete_list(app).select("vaccines")
    delete_box(app).check()
    next(b for b in app.button if b.label == "Delete").click().run()
    assert not app.exception
    assert any("Deleted 1 document(s), 1 passage(s)" in s.value for s in app.success)
    assert sorted(listed(app)) == ["bread", "bridges"] and overview(app)["my-notes"] == 2
    app.text_input(key=K + "search").input("measles immune system").run()
    assert not any("Vaccination" in m.value for m in app.markdown)

    # The next deletion starts from an empty list and an unticked box: the last one's confirmation is not carried over.
    assert delete_list(app).value == [] and delete_box(app).value is False
    delete_list(app).select("bread")
    next(b for b in app.button if b.label == "Delete").click().run()
    assert any("Tick" in e.value and "nothing was deleted" in e.value for e in app.error)
    assert sorted(listed(app)) == ["bread", "bridges"]


def test_deleting_the_last_documents_removes_the_corpus(app: AppTest) -> None:
    ingest(app, "tiny", ("one.txt", b"Only one short document here.", "text/plain"))
    delete_list(app).select("one")
    delete_box(app).check()
    next(b for b in app.button if b.label == "Delete").click().run()
    assert any("the corpus is gone too" in s.value for s in app.success)
    assert "tiny" not in overview(app)


def test_a_built_in_corpus_is_listed_but_not_deleted_from(app: AppTest) -> None:
    # The first page load (Verify's) indexed demo, the default corpus; the next built-in waits for its Index button.
    assert next(s for s in app.selectbox if s.label == "Index now").value == "check-covid"
    app.selectbox(key=K + "browse").select("demo").run()
    assert app.selectbox(key=K + "browse").value == "demo" and len(listed(app)) > 30
    assert any("is built in" in c.value for c in app.caption)
    assert not [m for m in app.multiselect if m.label == "Documents to delete"]


def test_odd_uploads_get_plain_messages_and_same_named_files_are_both_kept(app: AppTest) -> None:
    ingest(app, "my-notes", ("a\x00b.txt", b"Text.", "text/plain"))
    assert "the file name holds a control character" in " ".join(e.value for e in app.error)
    ingest(app, "my-notes", ("n" * 300 + ".txt", b"Text.", "text/plain"))
    assert "the file name is 304 characters" in " ".join(e.value for e in app.error)
    ingest(app, "my-notes", ("notes.txt", b"Masks help riders.", "text/plain"), ("notes.txt", b"Buses run late.", "text/plain"))
    assert escape_markdown("kept as notes (2).txt") in " ".join(i.value for i in app.info)
    assert overview(app)["my-notes"] == 2 and set(listed(app)) == {"notes", "notes (2)"}
