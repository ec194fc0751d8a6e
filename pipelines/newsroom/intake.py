"""Claims coming into the queue from a file or a pasted list, read as the Batch page reads them, with where each appeared.

A CSV (or JSON lines) file has a ``claim`` column and, optionally, where it appeared (``url``), when
(``date``), who said it (``claimant``), who takes it (``assignee``), by when (``due``) and ``tags``
(separated by commas or semicolons). Other columns are ignored. Each row is checked before any
is added: one bad row adds nothing, and the message names the row.
"""

from __future__ import annotations

from pipelines.newsroom.queue import Appearance, NewClaim, QueueError, checked_new, parse_tags
from pipelines.run.batch import BatchInputError, BatchItem, parse_claims_file, parse_claims_text

# Column names a newsroom's sheet may use for each field (lower case), the first found wins.
COLUMNS = {
    "url": ("url", "source_url", "appeared_at", "link", "source"),
    "on": ("date", "appeared_on", "claim_date", "published"),
    "claimant": ("claimant", "author", "speaker", "said_by"),
    "assignee": ("assignee", "assigned_to"),
    "due": ("due", "due_on", "due_date", "deadline"),
    "tags": ("tags", "tag", "topics"),
}


def claims_from_file(data: bytes, filename: str) -> list[NewClaim]:
    """Claims from an uploaded ``.csv``, ``.jsonl`` or ``.txt`` file (one claim per line, nothing else)."""
    try:
        items = parse_claims_file(data, filename)
    except BatchInputError as exc:
        raise QueueError(str(exc)) from None
    return [claim_of_item(item, filename) for item in items]


def claims_from_text(text: str) -> list[NewClaim]:
    """One claim per non-blank line, as pasted."""
    try:
        items = parse_claims_text(text)
    except BatchInputError as exc:
        raise QueueError(str(exc)) from None
    return [NewClaim(text=item.claim) for item in items]


def details_of_item(item: BatchItem) -> tuple[NewClaim, list[str]]:
    """A batch row as a queued claim, keeping every detail that reads: a bad address, date, name or tag leaves out only
    itself, and each one left out is named ("claim 2 (id '2'): where it appeared must be ...").

    The Batch page runs every claim whatever its other columns say; these are only what the claims queue is told of it.
    """
    found = dict(item.fields)
    values = {name: next((found[c] for c in names if found.get(c)), "") for name, names in COLUMNS.items()}
    kept: dict[str, str] = {}
    problems: list[str] = []
    for name, value in values.items():
        if not value.strip():
            continue
        try:
            checked_new(_claim_with("a claim", {name: value}))  # the detail alone, on a claim that always reads
            kept[name] = value
        except QueueError as exc:
            problems.append(f"claim {item.index + 1} (id {item.id!r}): {exc}")
    return _claim_with(item.claim, kept), problems


def _claim_with(text: str, values: dict[str, str]) -> NewClaim:
    return NewClaim(
        text=text,
        appearance=Appearance(url=values.get("url", ""), on=values.get("on", ""), claimant=values.get("claimant", "")),
        assignee=values.get("assignee", ""),
        due_on=values.get("due", ""),
        tags=parse_tags(values.get("tags", "")),
    )


def claim_of_item(item: BatchItem, where: str) -> NewClaim:
    """A batch row as a queued claim: its text and, from its other columns, where it appeared, who has it, when due, its tags."""
    found = dict(item.fields)

    def column(name: str) -> str:
        return next((found[c] for c in COLUMNS[name] if found.get(c)), "")

    try:
        return NewClaim(
            text=item.claim,
            appearance=Appearance(url=column("url"), on=column("on"), claimant=column("claimant")),
            assignee=column("assignee"),
            due_on=column("due"),
            tags=parse_tags(column("tags")),
        )
    except QueueError as exc:
        raise QueueError(f"{where}, claim {item.index + 1} (id {item.id!r}): {exc}") from None
