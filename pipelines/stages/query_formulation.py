"""Query formulation: a claim is a poor query, so the model rewrites it into search queries.

The claim itself stays the first query (the rewrites add, never replace), and a claim's
premises, when a protocol has decomposed it, are searched too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pipelines.core.errors import ModelOutputError
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.stages.schemas import SearchQueries

MAX_QUERY_CHARS = 300


async def formulate_queries(
    llm: LLM, claim: str, n: int = 2, premises: Sequence[str] = (), on_failure: Callable[[str], None] | None = None
) -> list[str]:
    """The claim, then up to ``n`` model-written queries, then the premises; duplicates dropped.

    A model that gives no usable answer leaves the claim and premises, and ``on_failure``
    hears why (a stage turns it into an event): retrieval goes on without a rewrite.
    """
    queries = [claim[:MAX_QUERY_CHARS]]
    if n > 0:
        try:
            answer = await llm.structured(load_prompt("search_queries").render(claim=claim, n=n), SearchQueries)
            queries.extend(q.strip()[:MAX_QUERY_CHARS] for q in answer.queries[:n])
        except ModelOutputError as exc:
            if on_failure is not None:
                on_failure(f"{exc}; searching with the claim itself")
    queries.extend(p.strip()[:MAX_QUERY_CHARS] for p in premises)
    seen: set[str] = set()
    unique = []
    for query in queries:
        key = query_key(query)
        if key and key not in seen:
            seen.add(key)
            unique.append(query)
    return unique


def query_key(query: str) -> str:
    """What makes two queries the same search: their words, whatever the case and spacing."""
    return " ".join(query.lower().split())


def same_query(a: str, b: str) -> bool:
    """Two queries that differ only in case and spacing are the same search."""
    return query_key(a) == query_key(b)
