"""A debate's turns as prompts show them: who said what, in which round or stage, in order."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.core.domain import Turn

NO_HISTORY = "(nothing yet)"


def format_history(turns: Sequence[Turn], *, stage_names: dict[int, str] | None = None, max_chars: int = 1200) -> str:
    """One block per turn, headed ``--- Agent, round 2 ---`` (or the stage's name), text trimmed to ``max_chars``."""
    if not turns:
        return NO_HISTORY
    blocks = []
    for turn in turns:
        when = (stage_names or {}).get(turn.round, f"round {turn.round}")
        text = turn.text.strip()
        if len(text) > max_chars:
            text = text[: max_chars - 3] + "..."
        blocks.append(f"--- {turn.agent}, {when} ---\n{text}")
    return "\n\n".join(blocks)


def latest_by_agent(turns: Sequence[Turn]) -> dict[str, Turn]:
    """Each agent's most recent turn."""
    latest: dict[str, Turn] = {}
    for turn in turns:
        latest[turn.agent] = turn
    return latest
