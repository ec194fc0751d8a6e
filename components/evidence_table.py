"""The evidence panel: every retrieved item with its source, query, round and scores."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pipelines.core.domain import Evidence
from pipelines.run.tools.web import is_web_url


def evidence_frame(
    items: list[Evidence],
    cited_by: dict[str, list[str]] | None = None,
    statements: dict[str, list[str]] | None = None,
    struck: dict[str, str] | None = None,
) -> pd.DataFrame:
    """One row per evidence item, ready for st.dataframe (pure: no Streamlit calls).

    ``statements`` maps an evidence id to the checked statements that rest on it (from
    faithfulness scoring); the column appears only when some protocol scored statements.
    ``struck`` (id -> reason) adds the checker's strikes as a column when there are any.
    """
    cited_by = cited_by or {}
    struck = struck or {}
    rows = []
    for e in items:
        rows.append(
            {
                "id": e.id,
                "source": e.source,
                "document": e.source_label if e.source != "web" else e.title,
                "link": e.url if e.url and is_web_url(e.url) else "",
                "found by": e.found_by,
                "query": e.query,
                "round": e.round,
                "score": e.retrieval_score,
                "dense": e.scores.get("dense"),
                "lexical": e.scores.get("lexical"),
                "fused": e.scores.get("fused"),
                "position": position_label(e),
                "cited by": ", ".join(cited_by.get(e.id, [])),
                **({"statements": " · ".join(statements.get(e.id, []))} if statements is not None else {}),
                **({"checker": f"struck: {struck[e.id]}" if e.id in struck else ""} if struck else {}),
                "text": e.text,
            }
        )
    frame = pd.DataFrame(rows)
    if "statements" in frame.columns:  # beside the score, not past the wide query and text columns
        order = list(frame.columns)
        order.remove("statements")
        order.insert(order.index("score") + 1, "statements")
        frame = frame[order]
    return frame


def position_label(e: Evidence) -> str:
    """Where a passage sits in its document: "passage 2 · sentences 3-5" (sentences counted from 1)."""
    if e.passage_index is None:
        return ""
    label = f"passage {e.passage_index + 1}"
    if e.sentence_indices:
        first, last = e.sentence_indices[0] + 1, e.sentence_indices[-1] + 1
        label += f" · sentence {first}" if first == last else f" · sentences {first}-{last}"
    return label


# What a checker reads first fits a laptop's width (no column cut off); how each item was found is a toggle away.
ESSENTIAL = ("id", "document", "text", "cited by", "statements", "checker", "score", "position", "link")
RETRIEVAL = ("source", "found by", "query", "round", "dense", "lexical", "fused")


def render_evidence_table(
    items: list[Evidence],
    cited_by: dict[str, list[str]] | None = None,
    key: str = "evidence",
    statements: dict[str, list[str]] | None = None,
    struck: dict[str, str] | None = None,
) -> None:
    if not items:
        st.caption("No evidence retrieved yet.")
        return
    frame = evidence_frame(items, cited_by, statements, struck)
    details = st.toggle(
        "How each was found (source, query, round, search scores)",
        key=f"{key}.details",
        help="The retrieval's columns beside the essentials.",
    )
    shown = [c for c in (*ESSENTIAL, *(RETRIEVAL if details else ())) if c in frame.columns]
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key=key,
        column_order=shown,
        column_config={
            "link": st.column_config.LinkColumn("link", display_text="open ↗"),
            "score": st.column_config.NumberColumn("score", format="%.3f", help="What ranked this item: the fused score in hybrid search."),
            "dense": st.column_config.NumberColumn("dense", format="%.3f", help="Cosine similarity of meaning (MiniLM) to the query."),
            "lexical": st.column_config.NumberColumn(
                "lexical", format="%.2f", help="BM25 word-match score for the query (0: no query word)."
            ),
            "fused": st.column_config.NumberColumn(
                "fused", format="%.3f", help="The two fused (weighted, 0-1): what hybrid search ranks by."
            ),
            "position": st.column_config.TextColumn("position", help="Which passage of the document, and which of its sentences."),
            "statements": st.column_config.TextColumn("statements resting on it", width="large"),
            "text": st.column_config.TextColumn("text", width="medium", help="The passage as retrieved; hover or widen to read it whole."),
        },
    )
