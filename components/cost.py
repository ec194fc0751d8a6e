"""A run's cost on the page: one line in total (calls, cached calls, tokens, model time, wall time) and a table per stage.

Drawn from the digest's ``Cost`` and ``Cost.by_stage``, live while the run goes (``RunView``
redraws it after each model call and on the live page's heartbeat) and the same in a History
replay. A call answered from the response cache or a resumed run's record counts as a call
and is marked; it costs no tokens and no model time, and the line says so. Prompt tokens the
model's server kept from the call before (llama.cpp's prompt cache) are sent but not read
again: the line and the table say how many.
"""

from __future__ import annotations

from typing import Any

from pipelines.core.text.safety import escape_markdown
from pipelines.record.digest import Cost


def cost_line(cost: Cost, *, running: bool) -> str:
    """The total in one line of Markdown (numbers and our own words only)."""
    head = "💰 **Cost so far**" if running else "💰 **Cost**"
    if not cost.calls:
        return f"{head}: no model calls yet · {cost.wall_seconds:.0f} s elapsed" if running else f"{head}: no model calls"
    line = (
        f"{head}: {cost.calls} model call{'s' if cost.calls != 1 else ''} · {cost.tokens_in:,} tokens in{cost.reused_note()} · "
        f"{cost.tokens_out:,} out{cost.spent_note()} · {cost.model_seconds:.1f} s of model time · "
        f"{cost.wall_seconds:.0f} s {'elapsed' if running else 'wall time'}"
    )
    return line + (f" · ♻️ {cost.cached_note()}" if cost.cached_calls else "")


def stage_table(by_stage: dict[str, Cost]) -> str:
    """One Markdown table row per stage, in the order the stages first called a model, then the total (our numbers; stage names escaped)."""
    priced = any(cost.priced for cost in by_stage.values())  # money has a column when the run has prices
    rows = [_row(escape_markdown(stage), cost, priced) for stage, cost in by_stage.items()]
    if len(rows) > 1:
        rows.append(_row("**total**", Cost.total(by_stage.values()), priced))
    head = [
        "| stage | calls | of which cached | tokens in | of which the server reused | tokens out | model s |"
        + (" spent |" if priced else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if priced else ""),
    ]
    return "\n".join(head + rows)


def _row(stage: str, cost: Cost, priced: bool = False) -> str:
    cached = f"♻️ {cost.cached_calls}" if cost.cached_calls else "0"
    row = f"| {stage} | {cost.calls} | {cached} | {cost.tokens_in:,} | {cost.tokens_reused:,} | {cost.tokens_out:,} | {cost.model_seconds:.2f} |"
    return row + (f" {cost.spent:.4g} |" if priced else "")


def render_cost(line_slot: Any, table_slot: Any, cost: Cost, by_stage: dict[str, Cost], *, running: bool) -> None:
    """Fill the two slots (st.empty elements the view made once): the line, and the per-stage table."""
    line_slot.markdown(cost_line(cost, running=running))  # markup: numbers and our own words
    if by_stage:
        table_slot.markdown(stage_table(by_stage))  # markup: numbers, our words, escaped stage names
    else:
        table_slot.caption("No model call yet.")
