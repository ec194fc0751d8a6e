"""The hash chain over a run's events: each event's link is the SHA-256 of the link before it and of the event itself.

An event's own digest is the SHA-256 of its canonical JSON (keys sorted, no spaces, UTF-8
as is, numbers as Python's ``json`` writes them); its link is ``SHA-256(previous link || own digest)`` over the 32 raw bytes of each,
the first event's previous link being 32 zero bytes. So every link carries the digest of
the one before it, and the last link (the head) stands for the whole run in order: change,
drop, swap or add one event and every link from there on differs.

Pure functions, no storage: the run store writes each event's link as it stores it
(``EventRow.chain``), the export lists the digests and links and signs them
(``pipelines.record.signing``), and ``compare`` says where a list of events departs from the
digests a record was signed with: which event index was changed, removed, reordered or
inserted.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ALGORITHM = "sha256-chain/v1"
GENESIS = "0" * 64  # the link before the first event
NOT_CHAINED = "not chained (stored before chaining)"

AlterationKind = Literal["changed", "removed", "inserted", "reordered"]


def canonical(payload: Mapping[str, Any]) -> bytes:
    """The one byte form an event is hashed in: JSON with sorted keys, no spaces, UTF-8 as is.

    A NaN is written as ``NaN``, as the store writes it: refusing it here would fail a run over a score.
    """
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def event_digest(payload: Mapping[str, Any]) -> str:
    """The SHA-256 of one event's canonical JSON, in hex."""
    return hashlib.sha256(canonical(payload)).hexdigest()


def link(previous: str, digest: str) -> str:
    """The chain's next link: SHA-256 over the previous link's 32 bytes and then the event digest's 32 bytes."""
    return hashlib.sha256(bytes.fromhex(previous) + bytes.fromhex(digest)).hexdigest()


def links(payloads: Iterable[Mapping[str, Any]], previous: str = GENESIS) -> list[str]:
    """Each event's link, in order, starting after ``previous``."""
    found = []
    for payload in payloads:
        previous = link(previous, event_digest(payload))
        found.append(previous)
    return found


def links_of_digests(digests: Iterable[str], previous: str = GENESIS) -> list[str]:
    """The links a list of event digests chains into (what a record's listed digests must add up to)."""
    found = []
    for digest in digests:
        previous = link(previous, digest)
        found.append(previous)
    return found


@dataclass(frozen=True)
class Alteration:
    """One way a list of events departs from the one that was signed; indices count from 0 like the record's ``events``.

    ``index`` is where the event stood in the signed record (None for an inserted one);
    ``found_at`` is where it stands in the file now (None for a removed one).
    """

    kind: AlterationKind
    index: int | None
    found_at: int | None

    def describe(self) -> str:
        match self.kind:
            case "changed":
                return f"event {self.index} was changed"
            case "removed":
                return f"event {self.index} was removed"
            case "inserted":
                return f"an event was inserted at index {self.found_at}"
            case _:
                return f"event {self.index} was moved to index {self.found_at}"


MAX_ALIGNED = 5_000  # events between the first and last difference that are aligned one by one (the alignment is quadratic at worst)


def compare(signed: Sequence[str], payloads: Sequence[Mapping[str, Any]]) -> list[Alteration]:
    """Where the events in hand depart from the digests that were signed, in signed order; [] when they match exactly.

    The common start and end are set aside, and what differs between them is aligned
    (``difflib``); an event found at another place is reordered, a span replaced one for
    one is changed, the rest removed or inserted. A middle longer than ``MAX_ALIGNED`` (a
    file made to be slow to check) is reported as changed from its first event, not aligned.
    """
    actual = [event_digest(p) for p in payloads]
    signed = list(signed)
    if signed == actual:
        return []
    start = 0
    while start < min(len(signed), len(actual)) and signed[start] == actual[start]:
        start += 1
    end = 0
    while end < min(len(signed), len(actual)) - start and signed[-1 - end] == actual[-1 - end]:
        end += 1
    old, new = signed[start : len(signed) - end], actual[start : len(actual) - end]
    if max(len(old), len(new)) > MAX_ALIGNED:
        return [Alteration("changed", start, start)]
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    ops = [(op, i1 + start, i2 + start, j1 + start, j2 + start) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]
    out_of_place = {signed[i] for _, i1, i2, _, _ in ops for i in range(i1, i2)}  # signed here, not in its place now
    in_wrong_place = {actual[j] for _, _, _, j1, j2 in ops for j in range(j1, j2)}  # in the file, not where it was signed
    gone: dict[str, list[int]] = {}  # digest -> signed indices no longer in place
    added: dict[str, list[int]] = {}  # digest -> file indices that are not where they were signed
    changed: list[Alteration] = []
    for op, i1, i2, j1, j2 in ops:
        pairs = zip(range(i1, i2), range(j1, j2), strict=True) if op == "replace" and i2 - i1 == j2 - j1 else ()
        paired: set[int] = set()
        for i, j in pairs:  # one event for another in the same place, neither found elsewhere: changed
            if signed[i] not in in_wrong_place and actual[j] not in out_of_place:
                changed.append(Alteration("changed", i, j))
                paired |= {i, -1 - j}
        for i in range(i1, i2):
            if i not in paired:
                gone.setdefault(signed[i], []).append(i)
        for j in range(j1, j2):
            if -1 - j not in paired:
                added.setdefault(actual[j], []).append(j)
    found = list(changed)
    for digest, indices in gone.items():
        moved_to = added.get(digest, [])
        for i in indices:
            if moved_to:
                found.append(Alteration("reordered", i, moved_to.pop(0)))
            else:
                found.append(Alteration("removed", i, None))
    found += [Alteration("inserted", None, j) for indices in added.values() for j in indices]
    return sorted(found, key=lambda a: (a.index if a.index is not None else a.found_at or 0, a.found_at or 0))


@dataclass(frozen=True)
class StoredChain:
    """What the run store's chain says of one run: intact, not chained, or broken at which stored events (``seq``, from 1)."""

    events: int
    chained: int  # events stored with a link (a run stored before chaining has none)
    broken_at: tuple[int, ...]  # seq numbers whose link does not follow from the event and the link before it
    head: str | None

    @property
    def intact(self) -> bool:
        return self.chained > 0 and not self.broken_at

    def describe(self) -> str:
        if self.broken_at:
            where = ", ".join(str(s) for s in self.broken_at[:10]) + (" ..." if len(self.broken_at) > 10 else "")
            return (
                f"broken: the stored chain does not hold at event seq {where} "
                "(that event was changed, or one before it was removed, inserted or moved)"
            )
        if self.chained == 0:
            return NOT_CHAINED
        if self.chained < self.events:
            return f"intact from event seq {self.events - self.chained + 1}; the {self.events - self.chained} before were {NOT_CHAINED}"
        return f"intact: {self.events} events chained"


def check_stored(rows: Sequence[tuple[int, Mapping[str, Any], str | None]]) -> StoredChain:
    """Check a run's stored events ``(seq, payload, link)`` in seq order; events without a link are the ones stored before chaining.

    The chain starts at the first event stored with a link (after GENESIS); an unlinked event
    after a linked one is a break, as is a gap in the seq numbers.
    """
    previous: str | None = None
    broken: list[int] = []
    chained = 0
    last_seq: int | None = None
    for seq, payload, stored in rows:
        gap = last_seq is not None and seq != last_seq + 1
        last_seq = seq
        if stored is None:
            if previous is not None:
                broken.append(seq)
            continue
        chained += 1
        expected = link(previous if previous is not None else GENESIS, event_digest(payload))
        if expected != stored or (gap and previous is not None):
            broken.append(seq)
        previous = stored
    return StoredChain(events=len(rows), chained=chained, broken_at=tuple(broken), head=previous)


__all__ = [
    "ALGORITHM",
    "GENESIS",
    "MAX_ALIGNED",
    "NOT_CHAINED",
    "Alteration",
    "StoredChain",
    "canonical",
    "check_stored",
    "compare",
    "event_digest",
    "link",
    "links",
    "links_of_digests",
]
