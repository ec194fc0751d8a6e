"""Corpora page: what is indexed; add a checker's files (text, Markdown, JSON lines, PDF, HTML); list, search and delete
a corpus's documents. The overview is drawn last, so a corpus added or changed on this run shows in it at once."""

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from components import state
from components.pages import render_page_header
from components.resources import get_services
from components.sign_in import acting_person
from corpora.chunking import chunk_documents
from corpora.loaders import SUPPORTED_SUFFIXES, CorpusFileError, FileLoader
from corpora.uploads import stage_uploads
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.newsroom.access.roles import require
from pipelines.run.tools.corpus_index import validate_corpus_name
from pipelines.run.tools.web import is_web_url

state.ensure_framed("pages/corpora.py")

K = state.CORPORA_PREFIX
form = state.keyed(K)  # the page's widgets
services = get_services()
render_page_header("pages/corpora.py")
notice = st.empty()  # always there, so the page below keeps its place whether or not a message shows
message = state.take_message(state.CORPORA_MESSAGE)
if message is not None:
    getattr(notice, message[0])(message[1])  # kind is success, error or info; the text was escaped when it was made
overview = st.container()  # filled at the end of the run, after any change below
add_section = st.container()
browse_section = st.container()
SUFFIXES = ", ".join(SUPPORTED_SUFFIXES)


def delete_keys() -> tuple[str, str]:
    """The delete form's field names under ``K``, new after each deletion: a box given a fresh key starts unticked in the browser too.

    Setting the old box back to False from the callback was not enough: the browser sometimes kept showing the tick it
    had submitted (seen under load in the browser test), so the next deletion's confirmation was already given.
    """
    n = form.get("delete.round", 0)
    return f"delete.{n}.docs", f"delete.{n}.sure"


def delete_chosen(corpus: str) -> None:
    """on_click of Delete: runs before the page is drawn, so the lists and counts below come without the documents."""
    docs, sure = delete_keys()
    chosen = list(form.get(docs) or [])
    if not chosen:
        state.set_message(state.CORPORA_MESSAGE, ("error", "⚠️ Choose the documents to delete first."))
    elif not form.get(sure):
        state.set_message(state.CORPORA_MESSAGE, ("error", "⚠️ Tick **Yes, delete them** to confirm; nothing was deleted."))
    else:
        try:
            require(acting_person(), "delete_documents")  # the role as the users file says now
            removed = services.index.delete_documents(corpus, chosen)
        except DebateDeskError as exc:  # not an editor (NotAllowedError), or the corpus was deleted by another session meanwhile
            state.set_message(state.CORPORA_MESSAGE, ("error", f"⚠️ {escape_markdown(str(exc))}"))
            return
        text = f"🗑️ Deleted {removed.documents} document(s), {removed.passages} passage(s) from {escape_markdown(corpus)}."
        if removed.corpus_removed:
            text += " No document was left, so the corpus is gone too."
        state.set_message(state.CORPORA_MESSAGE, ("success", text))
        form.forget(docs, sure)
        form.set("delete.round", form.get("delete.round", 0) + 1)


def index_builtin(name: str) -> None:
    """on_click of Index: a built-in corpus indexed before the page is drawn, so it shows in the lists at once."""
    try:
        with st.spinner(f"Indexing {name}…"):
            services.ensure_corpus(name)
        state.set_message(state.CORPORA_MESSAGE, ("success", f"✅ {escape_markdown(name)} indexed."))
        form.set("browse", name)
    except (CorpusFileError, ValueError) as exc:
        state.set_message(state.CORPORA_MESSAGE, ("error", f"⚠️ {escape_markdown(str(exc))}"))


with add_section:
    st.subheader("Add files")
    with st.form("ingest"):
        name = st.text_input(
            "Corpus name", value="my-notes", help="Lowercase letters, digits, '.', '_' and '-'. An existing name adds to that corpus."
        )
        # No type=: Streamlit then refuses a name holding NUL with an exception where this form should be; the loader
        # checks each file's name, extension and content itself and answers with a message naming the file.
        uploads = st.file_uploader(
            f"Files ({SUFFIXES})",
            accept_multiple_files=True,
            help='Text, Markdown and JSON lines ("text", optional "id", "title", "url"); PDF (its text layer: a scan needs OCR '
            "first) and saved web pages (.html: the article's text, its title and its address). A file of the same name replaces "
            'its earlier version; two different files of one name in one upload are both kept, the second as "name (2)".',
        )
        submitted = st.form_submit_button("Ingest", icon="📥")
    if submitted:
        try:
            corpus = validate_corpus_name(name)
            if not uploads:
                raise CorpusFileError(f"choose at least one file ({SUFFIXES})")
            with tempfile.TemporaryDirectory() as tmp:
                paths, shown, notes = stage_uploads([(u.name, u.getvalue()) for u in uploads], Path(tmp))
                for note in notes:  # two different files of one name: both kept, and the person told which is which
                    st.info(f"ℹ️ {escape_markdown(note)}")
                with st.spinner("Reading the files…"):
                    passages = list(chunk_documents(FileLoader(paths, display_names=shown).load_documents()))
                bar = st.progress(0.0, text=f"Embedding {len(passages):,} passages…")

                def advance(done: int, total: int) -> None:
                    bar.progress(done / max(total, 1), text=f"Embedding and indexing passages: {done:,} of {total:,}")

                report = services.index.ingest(corpus, passages, progress=advance)
                bar.empty()
            st.success(  # markup: a validated corpus name and counts
                f"✅ {report.corpus}: {report.documents} document{'s' if report.documents != 1 else ''}, "
                f"{report.passages} passage{'s' if report.passages != 1 else ''} ({report.added} new, "
                f"{report.already_present} already present). It is in the list above and in Verify's corpus list."
            )
            form.set("browse", report.corpus)  # show the new corpus's documents below
        except (CorpusFileError, ValueError) as exc:  # nothing was written: ingestion reads every file before the first write
            said = str(exc).rstrip()
            said += "" if said.endswith((".", "!", "?")) else "."
            st.error(f"⚠️ {escape_markdown(said)} Nothing was added.")  # it names the uploaded file

with browse_section:
    st.subheader("Documents")
    indexed = sorted(services.index.corpora())
    if not indexed:
        st.info("No corpus is indexed yet. Add files above, or index a built-in corpus below.")
    else:
        if form.get("browse") not in indexed:
            form.forget("browse")
        corpus = st.selectbox("Corpus", indexed, key=K + "browse")
        try:
            documents = services.index.documents(corpus)
        except DebateDeskError as exc:  # deleted by another session meanwhile
            st.error(f"⚠️ {escape_markdown(str(exc))}")
            documents = []
        find = st.text_input("Find documents", key=K + "find", placeholder="words of the title, the id or the file name")
        words = find.lower().split()
        shown_docs = [d for d in documents if all(w in f"{d.title} {d.id} {d.source}".lower() for w in words)]
        frame = pd.DataFrame(
            [
                {
                    "title": d.title,
                    "id": d.id,
                    "file or source": d.source,
                    "passages": d.passages,
                    "link": d.url if d.url and is_web_url(d.url) else "",
                }
                for d in shown_docs
            ],
            columns=["title", "id", "file or source", "passages", "link"],
        )
        st.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            key=f"{K}documents.{corpus}",
            column_config={"link": st.column_config.LinkColumn("link", display_text="open ↗")},
        )
        st.caption(f"{len(shown_docs)} of {len(documents)} documents.")  # markup: numbers

        query = st.text_input(
            "Search the passages", key=K + "search", placeholder="a claim or a question", help="What a run's corpus search would find."
        )
        if query.strip():
            hits = services.index.search(corpus, query.strip(), k=5)
            if not hits:
                st.caption("Nothing found.")
            for rank, hit in enumerate(hits, start=1):
                p = hit.passage
                st.markdown(
                    f"**{rank}. {escape_markdown(p.title)}** · {escape_markdown(p.doc_id)} · score {hit.score:.3f}"
                )  # markup: numbers and escaped text
                st.caption(escape_markdown(p.text[:600]))

        if corpus in services.builtin_corpora:
            st.caption(
                f"{escape_markdown(corpus)} is built in: it is indexed again from its source, so its documents are not deleted here."
            )
        elif documents:
            titles = {d.id: f"{d.title} · {d.id}" for d in shown_docs}
            docs, sure = delete_keys()
            with st.form(K + "delete"):
                st.multiselect(
                    "Documents to delete",
                    list(titles),
                    format_func=lambda i: titles.get(i, i),
                    key=form.key(docs),
                    help="Their passages leave the index at once; runs already stored keep the evidence they quoted.",
                )
                st.checkbox("Yes, delete them from this corpus", key=form.key(sure))
                st.form_submit_button("Delete", icon="🗑️", on_click=delete_chosen, args=(corpus,))

    builtin = [n for n in services.builtin_corpora if n not in indexed]
    if builtin:
        st.subheader("Built-in corpora")
        choice = st.selectbox("Index now", builtin)
        st.button("Index", icon="⚙️", on_click=index_builtin, args=(choice,))

with overview:
    known = services.index.corpora()
    rows = [
        {
            "corpus": n,
            "documents": known.get(n, {}).get("documents", 0),
            "passages": known.get(n, {}).get("passages", 0),
            "status": "indexed" if n in known else "built in, indexed on first use",
        }
        for n in services.corpus_names()
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key=f"{K}overview.{len(rows)}.{sum(r['passages'] for r in rows)}")
