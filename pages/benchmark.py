"""Benchmark page: evaluate protocols on claims with known answers, then compare any past evaluations."""

import tempfile
import time
from pathlib import Path

import streamlit as st

from components import state
from components.eval_charts import report_label
from components.eval_view import get_eval_store, render_comparison
from components.pages import render_page_header
from components.resources import get_services
from pipelines.core.config import RunConfig
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.eval.corpus_check import evidence_coverage
from pipelines.eval.datasets import Dataset, load_check_covid, load_jsonl
from pipelines.eval.harness import evaluate, evaluation_config, select_items
from pipelines.eval.labels import LABEL_MODES
from pipelines.eval.records import write_report_files
from pipelines.protocols.base import get_protocol, protocol_names
from pipelines.run.llm.registry import backend_names, get_backend

state.ensure_framed("pages/benchmark.py")

DATASETS = {
    "check-covid/dev": "Check-COVID dev (160 claims)",
    "check-covid/train": "Check-COVID train (842 claims)",
    "upload": "My own JSONL file (claim, label, optional evidence)",
}

services = get_services()
store = get_eval_store()
render_page_header("pages/benchmark.py")
st.caption(
    "How good is each protocol, and what does it cost? Run protocols on claims whose answers are known; every claim is a normal "
    "stored run, every evaluation is kept, and any of them can be compared below."
)

with st.form("benchmark"):
    left, right = st.columns(2)
    dataset_key = left.selectbox("Dataset", list(DATASETS), format_func=DATASETS.get)
    upload = left.file_uploader(
        "Your JSONL file",
        type=["jsonl"],
        help='One claim per line: {"claim": "…", "label": "SUPPORTS", "id": "…", "evidence": [{"doc_id": "…", "sentences": [0, 2]}]}. '
        "Labels may be spelt as any protocol or Check-COVID does (TRUE, SUPPORTED, REFUTE, NEI, …).",
    )
    corpora = services.corpus_names()
    corpus = left.selectbox(
        "Corpus for your file",
        corpora,
        index=None,
        placeholder="the corpus that holds your claims' evidence",
        help="Which corpus the protocols search for your file's claims (add one on the Corpora page). "
        "Check-COVID always searches the check-covid corpus.",
    )
    protocols = right.multiselect(
        "Protocols",
        protocol_names(),
        default=[n for n in protocol_names() if get_protocol(n).benchmark],
        format_func=lambda n: f"{n} — {get_protocol(n).title}",
    )
    backends = backend_names()
    default_backend = RunConfig().debater.backend
    backend = right.selectbox(
        "Model backend (all roles)", backends, index=backends.index(default_backend) if default_backend in backends else 0
    )
    size_col, seed_col, conc_col = right.columns(3)
    size = size_col.number_input(
        "Claims", min_value=1, max_value=1000, value=10, help="A fixed, label-balanced sample of this many claims."
    )
    seed = seed_col.number_input("Sample seed", min_value=0, value=0, help="The same seed takes the same claims.")
    concurrency = conc_col.number_input("Claims at once", min_value=1, max_value=16, value=2)
    labels = right.radio(
        "Scoring",
        LABEL_MODES,
        horizontal=True,
        format_func=lambda m: "three classes" if m == "three" else "binary (SUPPORTS/REFUTES claims only)",
    )
    submitted = st.form_submit_button("Run evaluation", type="primary", icon="▶️")

if not get_backend(backend).is_real_model:
    st.warning("🧪 **fake** is not a real model: its answers come from word overlap. Its figures measure the harness, not a model.")
elif backend == "embedded":
    st.info(
        "💻 The embedded model is slow and a weak judge. Measured on a quiet 2-core machine: about 15-20 s per claim for `desk` "
        "(15 calls), 30-60 s for `single`, 4-10 minutes for `toolmad` (31 model calls), so 30 `toolmad` claims take about 3.5 hours. One model serves every claim, "
        "so more claims at once hardly finish sooner."
    )


def load_chosen() -> tuple[Dataset, str]:
    if dataset_key == "upload":
        if upload is None:
            raise DebateDeskError("choose a JSONL file for 'My own JSONL file'")
        if corpus is None:
            raise DebateDeskError("choose the corpus for your file: the one that holds your claims' evidence (add it on the Corpora page)")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(upload.name).name
            path.write_bytes(upload.getvalue())
            dataset = load_jsonl(path)
        check_evidence_is_in(dataset, corpus)
        return dataset, corpus
    _, split = dataset_key.split("/")
    return load_check_covid(services.settings.checkcovid_dir, split), "check-covid"


def check_evidence_is_in(dataset: Dataset, corpus: str) -> None:
    """Refuse a corpus that holds none of the documents the file's gold evidence names; warn when some are missing."""
    services.ensure_corpus(corpus)
    coverage = evidence_coverage(dataset, {d.id for d in services.index.documents(corpus)})
    examples = ", ".join(coverage.missing[:3])
    if coverage.none_found:
        raise DebateDeskError(
            f"none of the {coverage.named} documents your file's evidence names (e.g. {examples}) is in the corpus {corpus!r}: "
            "choose the corpus that holds them, or add them on the Corpora page"
        )
    if coverage.missing:
        st.warning(  # markup: counts and escaped names
            f"⚠️ {len(coverage.missing)} of the {coverage.named} documents your file's evidence names are not in "
            f"{escape_markdown(corpus)} (e.g. {escape_markdown(examples)}): the evidence scores count them as never found."
        )


if submitted:
    state.set_bench_error(None)
    try:
        if not protocols:
            raise DebateDeskError("choose at least one protocol")
        dataset, dataset_corpus = load_chosen()
        per_protocol = len(select_items(dataset, labels, int(size), int(seed)).items)
        total = per_protocol * len(protocols)
        bar = st.progress(0.0, text=f"Preparing the {dataset_corpus} corpus…")
        finished: list[str] = []
        started = time.perf_counter()
        for number, protocol in enumerate(protocols):
            config = evaluation_config(RunConfig(), protocol=protocol, backend=backend, corpus=dataset_corpus)

            def progress(outcome, done: int, of: int, number: int = number, protocol: str = protocol) -> None:  # type: ignore[no-untyped-def]
                overall = number * per_protocol + done
                shown = outcome.verdict or "failed"
                bar.progress(
                    overall / total,
                    text=f"{protocol}: {done} of {of} claims · last {escape_markdown(outcome.id)} → {escape_markdown(shown)} · "
                    f"{time.perf_counter() - started:.0f} s",
                )

            report = evaluate(
                dataset, config, services, labels=labels, limit=int(size), seed=int(seed), concurrency=int(concurrency), on_outcome=progress
            )
            write_report_files(report, services.settings.data_dir / "evals")
            if store is not None:
                store.save(report)
            finished.append(report.id)
        bar.progress(1.0, text=f"Done: {len(protocols)} evaluation(s) of {per_protocol} claims in {time.perf_counter() - started:.0f} s")
        state.set_compared(finished)
    except (DebateDeskError, ValueError) as exc:
        state.set_bench_error(str(exc))

if state.bench_error():
    st.error(f"⚠️ {escape_markdown(state.bench_error())}")

st.header("Evaluations")
past = store.recent(200) if store is not None else []
if not past:
    st.info("No evaluations yet. Choose a dataset and protocols above and press **Run evaluation**.")
else:
    by_id = {r.id: r for r in past}
    if state.compared() is None:
        state.set_compared([r.id for r in past[:3]])
    state.set_compared([i for i in state.compared() or [] if i in by_id])
    chosen = st.multiselect(
        "Compare",
        list(by_id),
        key=state.BENCH_COMPARE,
        format_func=lambda i: f"{report_label(by_id[i])} · {by_id[i].dataset}/{by_id[i].split} · {when(by_id[i].created_at)}",
        help="Past evaluations are kept in the run database; pick any to compare.",
    )
    if chosen:
        render_comparison([by_id[i] for i in chosen])
    else:
        st.info("Pick evaluations to compare.")
