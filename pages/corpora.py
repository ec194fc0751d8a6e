"""Corpora page: see what is indexed, and ingest a checker's own files into a named corpus."""

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from components import state
from components.pages import render_page_header
from components.safe_text import escape_markdown
from components.services import get_services
from corpora.chunking import chunk_documents
from corpora.loaders import SUPPORTED_SUFFIXES, CorpusFileError, FileLoader
from pipelines.tools.corpus_index import validate_corpus_name

state.ensure_framed("pages/corpora.py")

services = get_services()
render_page_header("pages/corpora.py")

known = services.index.corpora()
rows = [
    {
        "corpus": name,
        "documents": known.get(name, {}).get("documents", 0),
        "passages": known.get(name, {}).get("passages", 0),
        "status": "indexed" if name in known else "built in, indexed on first use",
    }
    for name in services.corpus_names()
]
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

st.subheader("Add files")
with st.form("ingest"):
    name = st.text_input(
        "Corpus name", value="my-notes", help="Lowercase letters, digits, '.', '_' and '-'. An existing name adds to that corpus."
    )
    uploads = st.file_uploader("Files", type=[s.lstrip(".") for s in SUPPORTED_SUFFIXES], accept_multiple_files=True)
    submitted = st.form_submit_button("Ingest", icon="📥")

if submitted:
    try:
        corpus = validate_corpus_name(name)
        if not uploads:
            raise CorpusFileError("choose at least one .txt, .md or .jsonl file")
        with tempfile.TemporaryDirectory() as tmp:
            paths, shown = [], {}
            for upload in uploads:
                path = Path(tmp) / Path(upload.name).name
                path.write_bytes(upload.getvalue())
                paths.append(path)
                shown[path] = upload.name
            with st.spinner("Embedding passages…"):
                report = services.index.ingest(corpus, chunk_documents(FileLoader(paths, display_names=shown).load_documents()))
        st.success(  # markup: a validated corpus name and counts
            f"✅ {report.corpus}: {report.documents} documents, {report.passages} passages ({report.added} new, {report.already_present} already present)."
        )
    except (CorpusFileError, ValueError) as exc:
        st.error(f"⚠️ {escape_markdown(str(exc))}")  # it names the uploaded file

builtin = [n for n in services.builtin_corpora if n not in known]
if builtin:
    st.subheader("Built-in corpora")
    choice = st.selectbox("Index now", builtin)
    if st.button("Index", icon="⚙️"):
        try:
            with st.spinner(f"Indexing {choice}…"):
                services.ensure_corpus(choice)
            st.success(f"✅ {escape_markdown(choice)} indexed.")
        except (CorpusFileError, ValueError) as exc:
            st.error(f"⚠️ {escape_markdown(str(exc))}")
