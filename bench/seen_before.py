"""Seen before? How well the desk finds an earlier fact-check of a claim that comes in again, worded differently.

The earlier fact-checks are every binary LIAR-PLUS claim (PolitiFact's, train and dev: 1,582 statements with their
verdicts, read from ../shared/data/liar-plus). The incoming claims are the team's own paraphrases of a subset chosen by
id before looking (train: ids divisible by 20, 42 claims; dev: by 13, 69), in ``bench/data/seen_before_paraphrases.jsonl``
(ids and paraphrases only; the statements stay in shared/). Each paraphrase should find its source. As many claims come in
that the desk has NOT checked: each chosen claim's own words with it left out of the earlier checks, so any match above a
threshold is a false one (PolitiFact sometimes checked one statement twice; those count against us too).

    .venv/bin/python -m bench.seen_before [--split dev] [--suggest 0.70 --join 0.90] [--sweep] [--out FILE.json]

Figures, per scorer (keyword: BM25 over the index's tokens, the CheckThat! baseline; minilm: the embeddings' cosine;
shipped: the cosine with the content-word overlap, what the desk uses): MAP@5 and recall@1 of the paraphrases; at the
thresholds, recall at suggest (paraphrases whose source is offered), precision at join (joined claims joined to their
source) and how many unchecked claims would be offered or joined. ``--sweep`` prints the thresholds' trade-off (on train,
to choose them).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipelines.newsroom import matching
from pipelines.run.tools.lexical import tokenize

LIAR = Path(__file__).resolve().parents[2] / "shared" / "data" / "liar-plus"
PARAPHRASES = Path(__file__).resolve().parent / "data" / "seen_before_paraphrases.jsonl"


@dataclass(frozen=True)
class Pool:
    ids: list[str]
    texts: list[str]


def load_pool(liar: Path) -> Pool:
    rows = [json.loads(line) for split in ("train", "dev") for line in (liar / f"liar_{split}_binary.jsonl").open(encoding="utf-8")]
    return Pool([r["id"] for r in rows], [r["claim"] for r in rows])


def load_queries(split: str, pool: Pool, path: Path = PARAPHRASES) -> list[tuple[str, str]]:
    """(source id, paraphrase) of one split, in the file's order."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    known = set(pool.ids)
    return [(r["id"], r["paraphrase"]) for r in rows if r["id"].startswith(f"c-{split}-") and r["id"] in known]


Scorer = Callable[[str, list[str]], np.ndarray]


def shipped_scorer(embedder: matching.Embedder) -> Scorer:
    return lambda query, texts: matching.scores(query, texts, embedder)[0]


def cosine_scorer(embedder: matching.Embedder) -> Scorer:
    return lambda query, texts: matching.scores(query, texts, embedder)[1]


def keyword_scorer(pool: Pool) -> Scorer:
    import bm25s

    corpus = [tokenize(t) for t in pool.texts]
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    position = {t: i for i, t in enumerate(pool.texts)}

    def score(query: str, texts: list[str]) -> np.ndarray:
        everything = index.get_scores(tokenize(query))
        return np.array([everything[position[t]] for t in texts], dtype=np.float32)

    return score


def ranked(scorer: Scorer, query: str, pool: Pool, leave_out: str | None = None) -> list[tuple[str, float]]:
    keep = [i for i, pid in enumerate(pool.ids) if pid != leave_out]
    values = scorer(query, [pool.texts[i] for i in keep])
    order = np.argsort(-values, kind="stable")
    return [(pool.ids[keep[j]], float(values[j])) for j in order]


def figures(
    scorer: Scorer, pool: Pool, queries: list[tuple[str, str]], thresholds: matching.Thresholds | None
) -> tuple[dict[str, float], list[float], list[float], list[float]]:
    """The ranking figures, and the scores needed for thresholds: each paraphrase's source score and top score with its
    correctness, and each unchecked claim's top score."""
    ap, first, source_scores, top_correct, unchecked_top = [], [], [], [], []
    tops: list[tuple[float, bool]] = []
    for source, paraphrase in queries:
        ranking = ranked(scorer, paraphrase, pool)
        ids = [pid for pid, _ in ranking[:5]]
        ap.append(1.0 / (ids.index(source) + 1) if source in ids else 0.0)
        first.append(float(ids[0] == source))
        source_scores.append(next(s for pid, s in ranking if pid == source))
        tops.append((ranking[0][1], ranking[0][0] == source))
        original = pool.texts[pool.ids.index(source)]
        unchecked_top.append(ranked(scorer, original, pool, leave_out=source)[0][1])
        top_correct.append(float(ranking[0][0] == source))
    out = {"map_at_5": float(np.mean(ap)), "recall_at_1": float(np.mean(first)), "claims": float(len(queries))}
    if thresholds is not None:
        out.update(at_thresholds(thresholds, source_scores, tops, unchecked_top))
    return out, source_scores, [t for t, _ in tops], unchecked_top


def at_thresholds(
    thresholds: matching.Thresholds, source_scores: list[float], tops: list[tuple[float, bool]], unchecked_top: list[float]
) -> dict[str, float]:
    joined = [(score, right) for score, right in tops] + [(score, False) for score in unchecked_top]
    joined = [(s, r) for s, r in joined if s >= thresholds.join]
    return {
        "suggest": thresholds.suggest,
        "join": thresholds.join,
        "recall_at_suggest": float(np.mean([s >= thresholds.suggest for s in source_scores])),
        "recall_at_join": float(np.mean([s >= thresholds.join and r for s, (_, r) in zip(source_scores, tops, strict=True)])),
        "precision_at_join": float(np.mean([r for _, r in joined])) if joined else float("nan"),
        "joined": float(len(joined)),
        "unchecked_offered": float(sum(s >= thresholds.suggest for s in unchecked_top)),
        "unchecked_joined": float(sum(s >= thresholds.join for s in unchecked_top)),
    }


def sweep(source_scores: list[float], tops: list[tuple[float, bool]], unchecked_top: list[float]) -> None:
    print("threshold  recall(source >= t)  unchecked >= t  top right >= t  top wrong >= t")
    for t in np.arange(0.50, 1.0001, 0.025):
        right = sum(s >= t and r for s, r in tops)
        wrong = sum(s >= t and not r for s, r in tops) + sum(s >= t for s in unchecked_top)
        recall = np.mean([s >= t for s in source_scores])
        print(f"{t:9.3f}  {recall:19.3f}  {sum(s >= t for s in unchecked_top):14d}  {right:14d}  {wrong:14d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("train", "dev"), default="dev")
    parser.add_argument("--suggest", type=float, default=matching.Thresholds().suggest)
    parser.add_argument("--join", type=float, default=matching.Thresholds().join)
    parser.add_argument("--sweep", action="store_true", help="print the shipped scorer's threshold trade-off")
    parser.add_argument("--liar", type=Path, default=LIAR, help="the LIAR-PLUS folder (../shared/data/liar-plus)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from pipelines.run.tools.embedding_cache import CachedEmbedder
    from pipelines.run.tools.embeddings import default_embedder

    pool = load_pool(args.liar)
    queries = load_queries(args.split, pool)
    embedder = CachedEmbedder(default_embedder())
    embedder.embed(pool.texts)  # once; every query reads the pool's vectors from memory
    thresholds = matching.Thresholds(args.suggest, args.join)
    results: dict[str, dict[str, float]] = {}
    for name, scorer, bounded in (
        ("keyword", keyword_scorer(pool), False),
        ("minilm", cosine_scorer(embedder), True),
        ("shipped", shipped_scorer(embedder), True),
    ):
        found, source_scores, _, unchecked = figures(scorer, pool, queries, thresholds if bounded else None)
        results[name] = found
        if name == "shipped" and args.sweep:
            tops = [(ranked(scorer, p, pool)[0][1], ranked(scorer, p, pool)[0][0] == s) for s, p in queries]
            sweep(source_scores, tops, unchecked)
    print(f"{args.split}: {len(queries)} paraphrased claims and {len(queries)} unchecked ones, against {len(pool.ids)} fact-checks")
    keys = ["map_at_5", "recall_at_1", "recall_at_suggest", "recall_at_join", "precision_at_join", "unchecked_offered", "unchecked_joined"]
    print(f"{'scorer':<9}" + "".join(f"{k:>19}" for k in keys))
    for name, found in results.items():
        print(f"{name:<9}" + "".join(f"{found[k]:>19.3f}" if k in found else f"{'':>19}" for k in keys))
    if args.out is not None:
        args.out.write_text(json.dumps({"split": args.split, "thresholds": [args.suggest, args.join], **results}, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
