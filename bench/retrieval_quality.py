"""How well corpus search finds the deciding abstract of a Check-COVID claim, and how fast.

    .venv/bin/python bench/retrieval_quality.py [--split dev] [--limit N] [--backend fake|embedded]
        [--variants dense,lexical,hybrid,...] [--corpus-docs N] [--data-dir DIR] [--passage-precision int8,float32]

Builds a fresh index of the Check-COVID abstracts (3-sentence passages, title prepended;
Chroma + BM25) and, for each variant, searches once per claim and prints one table:

- doc R@k: share of claims whose deciding abstract (its ``cord_id``) is among the first k
  documents returned (k = 1, 3, 5, 10, 20, 30: the last two say how many exhibits would hold it);
- sent R@k: share of the gold rationale sentences (``evidence_set``) that the passages of the
  first k documents quote, averaged over claims (a passage holds 3 of the abstract's sentences);
- p50/p95 ms: time of one claim's retrieval (query formulation, search and rerank included);
- build s: time to build the index (embedding every passage + BM25), the same for every row.

Variants: ``dense``, ``lexical``, ``hybrid`` (one query: the claim); ``hybrid+sentences``
(the fused top 20 reranked by each passage's best sentence, offline, the rest after them as fused); ``hybrid+queries``
(the claim plus 2 model-written queries, fused); ``hybrid+judge`` (the fused top 20 rated by
the model in one call). The model variants use ``--backend`` (fake: word overlap, which
tests the plumbing, not a model's judgement). Tune on ``--split train``; report on dev.

``--passage-precision int8,float32`` builds the index once per precision of the passages' MiniLM weights
(``AppSettings.passage_precision``; queries are always embedded with the float weights) and gives each row its
precision: the two side by side in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora.base import Document
from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader
from pipelines.core.config import AppSettings, ModelSpec
from pipelines.run.llm.client import LLM
from pipelines.run.tools.corpus_index import CorpusIndex, Hit
from pipelines.run.tools.embeddings import Embedder, default_embedder
from pipelines.stages.query_formulation import formulate_queries
from pipelines.stages.rerank import RERANK_DEPTH, rerank_by_model, rerank_by_sentences

CORPUS = "check-covid-bench"
DOC_KS = (1, 3, 5, 10, 20, 30)  # 20 and 30: how many exhibits a reader would need to hold the deciding abstract
SENT_KS = (3, 5)
VARIANTS = ("dense", "lexical", "hybrid", "hybrid+sentences", "hybrid+queries", "hybrid+judge")
COLUMNS = ("variant", *(f"doc R@{k}" for k in DOC_KS), *(f"sent R@{k}" for k in SENT_KS), "p50 ms", "p95 ms", "build s")


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    doc_id: str
    gold_sentences: frozenset[int]


@dataclass
class Row:
    """One variant's figures, all from the same run over the same claims and index."""

    variant: str
    claims: int = 0
    doc_hits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(DOC_KS, 0))
    sentence_recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(SENT_KS, 0.0))
    seconds: list[float] = field(default_factory=list)
    build_s: float = 0.0

    def add(self, claim: Claim, hits: Sequence[Hit], seconds: float) -> None:
        self.claims += 1
        self.seconds.append(seconds)
        docs = [h.passage.doc_id for h in hits]
        for k in DOC_KS:
            self.doc_hits[k] += claim.doc_id in docs[:k]
        for k in SENT_KS:
            quoted = {i for h in hits[:k] if h.passage.doc_id == claim.doc_id for i in h.passage.sentence_indices}
            if claim.gold_sentences:
                self.sentence_recall[k] += len(quoted & claim.gold_sentences) / len(claim.gold_sentences)

    def values(self) -> dict[str, str]:
        n = max(self.claims, 1)
        ms = sorted(s * 1000 for s in self.seconds) or [0.0]
        return {
            "variant": self.variant,
            **{f"doc R@{k}": f"{self.doc_hits[k] / n:.3f}" for k in DOC_KS},
            **{f"sent R@{k}": f"{self.sentence_recall[k] / n:.3f}" for k in SENT_KS},
            "p50 ms": f"{statistics.median(ms):.0f}",
            "p95 ms": f"{percentile(ms, 95):.0f}",
            "build s": f"{self.build_s:.1f}",
        }


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def load_claims(folder: Path, split: str, limit: int | None = None) -> list[Claim]:
    path = folder / f"covidCheck_{split}_composed.json"
    if not path.is_file():
        raise SystemExit(f"no {path.name} in {folder}: pass --checkcovid-dir or set DEBATEDESK_CHECKCOVID_DIR to the Check-COVID folder")
    claims = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            gold = frozenset(int(e["sent_index"]) for e in row.get("evidence_set", []))
            claims.append(Claim(id=row["id"], text=row["claim"].strip(), doc_id=row["cord_id"], gold_sentences=gold))
    return claims[:limit] if limit else claims


def select_documents(documents: list[Document], claims: list[Claim], corpus_docs: int | None) -> list[Document]:
    """The whole corpus, or (for a quick smoke run) every claim's deciding document plus others up to ``corpus_docs``."""
    if not corpus_docs:
        return documents
    needed = {c.doc_id for c in claims}
    chosen = [d for d in documents if d.id in needed]
    chosen += [d for d in documents if d.id not in needed][: max(0, corpus_docs - len(chosen))]
    return chosen


def build_index(
    documents: list[Document], data_dir: Path, embedder: Embedder, corpus: str = CORPUS, passage_precision: str | None = None
) -> tuple[CorpusIndex, float]:
    """A fresh index of ``documents`` (an old one of that name is deleted first, so the build is timed whole)."""
    settings = AppSettings(data_dir=data_dir)
    if passage_precision:
        settings = settings.model_copy(update={"passage_precision": passage_precision})
    index = CorpusIndex(settings, embedder)
    if index.has(corpus):
        index.delete(corpus)
    started = time.perf_counter()
    index.ingest(corpus, chunk_documents(documents))
    return index, time.perf_counter() - started


def make_llm(backend: str, settings: AppSettings) -> LLM:
    """The model the model-based variants use (the judge role's, as in a run)."""
    from pipelines.run.llm.registry import build_chat_model, get_backend

    spec = ModelSpec(backend=backend, max_tokens=512)
    info = get_backend(backend)
    return LLM(build_chat_model(spec, settings), role="judge", model_name=info.default_model or backend, max_retries=spec.max_retries)


def search_fn(variant: str, index: CorpusIndex, embedder: Embedder, llm: LLM | None, corpus: str = CORPUS) -> Callable[[str], list[Hit]]:
    """One claim in, max(DOC_KS) documents out, for a variant; a rerank reorders the fused top RERANK_DEPTH, the rest follow as fused."""
    depth = max(DOC_KS)

    def plain(claim: str) -> list[Hit]:
        return index.search(corpus, claim, max(DOC_KS), mode=variant)  # type: ignore[arg-type]

    def sentences(claim: str) -> list[Hit]:
        hits = index.search(corpus, claim, depth)
        return rerank_by_sentences(embedder, claim, hits[:RERANK_DEPTH]) + hits[RERANK_DEPTH:]

    def queries(claim: str) -> list[Hit]:
        assert llm is not None
        written = asyncio.run(formulate_queries(llm, claim, n=2))
        return index.search(corpus, written, max(DOC_KS))

    def judge(claim: str) -> list[Hit]:
        assert llm is not None
        hits = index.search(corpus, claim, depth)
        return asyncio.run(rerank_by_model(llm, claim, hits[:RERANK_DEPTH])) + hits[RERANK_DEPTH:]

    table: dict[str, Callable[[str], list[Hit]]] = {
        "dense": plain,
        "lexical": plain,
        "hybrid": plain,
        "hybrid+sentences": sentences,
        "hybrid+queries": queries,
        "hybrid+judge": judge,
    }
    if variant not in table:
        raise ValueError(f"unknown variant {variant!r}; choose from: {', '.join(table)}")
    return table[variant]


def run_benchmark(
    claims: list[Claim],
    documents: list[Document],
    *,
    embedder: Embedder,
    data_dir: Path,
    variants: Sequence[str] = VARIANTS,
    backend: str = "fake",
    progress: Callable[[str], None] | None = None,
    corpus: str = CORPUS,
    passage_precision: str | None = None,
) -> list[Row]:
    """Build the index once (as ``corpus`` in ``data_dir``), then run every variant over the same claims."""
    index, build_s = build_index(documents, data_dir, embedder, corpus, passage_precision)
    needs_model = any(v in ("hybrid+queries", "hybrid+judge") for v in variants)
    llm = make_llm(backend, AppSettings(data_dir=data_dir)) if needs_model else None
    index.search(corpus, "warm-up query", 1)  # first-call costs (loading BM25, torch kernels) are not a query's
    rows = []
    for variant in variants:
        search = search_fn(variant, index, embedder, llm, corpus)
        row = Row(variant=f"{variant}, {passage_precision} passages" if passage_precision else variant, build_s=build_s)
        for claim in claims:
            started = time.perf_counter()
            hits = search(claim.text)
            row.add(claim, hits, time.perf_counter() - started)
        rows.append(row)
        if progress is not None:  # each row as soon as it is done: a long run shows its figures as it goes
            progress(" | ".join(f"{c} {v}" for c, v in row.values().items()))
    return rows


def format_table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        values = row.values()
        lines.append("| " + " | ".join(values[c] for c in COLUMNS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N claims of the split")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, from: {', '.join(VARIANTS)}")
    parser.add_argument("--backend", default="fake", help="model for hybrid+queries and hybrid+judge: fake, embedded or openai")
    parser.add_argument("--corpus-docs", type=int, default=None, help="index only the claims' documents plus others up to N (smoke runs)")
    parser.add_argument("--checkcovid-dir", type=Path, default=AppSettings().checkcovid_dir)
    parser.add_argument("--data-dir", type=Path, default=None, help="where to build the index (default: a temporary folder)")
    parser.add_argument(
        "--passage-precision", default="", help="comma-separated int8,float32: one index a precision, side by side (default: the app's)"
    )
    args = parser.parse_args(argv)

    claims = load_claims(args.checkcovid_dir, args.split, args.limit)
    documents = select_documents(list(CheckCovidLoader(args.checkcovid_dir).load_documents()), claims, args.corpus_docs)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    passages = sum(1 for _ in chunk_documents(documents))
    print(
        f"Check-COVID {args.split}: {len(claims)} claims; corpus {len(documents)} abstracts, {passages} passages; "
        f"model variants on the {args.backend} backend",
        flush=True,
    )
    rows = []
    for precision in [p.strip() for p in args.passage_precision.split(",") if p.strip()] or [None]:
        with tempfile.TemporaryDirectory() as tmp:
            rows += run_benchmark(
                claims,
                documents,
                embedder=default_embedder(),
                data_dir=args.data_dir or Path(tmp),
                variants=variants,
                backend=args.backend,
                progress=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
                passage_precision=precision,
            )
    print(format_table(rows))


if __name__ == "__main__":
    main()
