"""Whether a record file is intact, whose key signed it, and where it was altered: what ``verify-record`` and the import say.

Read at the level of the file's JSON, before any event is parsed, so a record from another
version (or a forger) is judged on its bytes: the signature over the record without its
events (``signed_part``), the listed chain against itself, and each event against the
digest it was signed with (``chain.compare``: changed, removed, reordered or inserted, by
index). The key is named by its fingerprint, and as this desk's own when it is.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from pipelines.record import chain
from pipelines.record.signing import fingerprint, verify_signature
from pipelines.text.safety import JsonTooDeepError, load_json

Verdict = str  # "intact", "altered", "unsigned", "not chained", "unreadable"


def signed_part(record: dict[str, Any]) -> bytes:
    """What a record's signature covers: the canonical JSON of the record without its events (the chain stands for them) and its signature."""
    return chain.canonical({k: v for k, v in record.items() if k not in ("events", "signature")})


@dataclass(frozen=True)
class RecordCheck:
    """What a record file's signature and chain say; ``lines()`` puts it into words."""

    events: int
    chained: bool  # the file lists its events' digests (schema version 2)
    chain_consistent: bool  # the listed links and head add up from the listed digests
    alterations: tuple[chain.Alteration, ...]  # where the events depart from the listed digests
    signed: bool
    signature_valid: bool
    signer: str  # the fingerprint of the key in the file ("" when unsigned or unreadable)
    this_desk: bool  # that key is this desk's own
    stored: str  # what the exporting store said of its own chain
    problem: str = ""  # why the file could not be checked at all

    @property
    def intact(self) -> bool:
        """Signed (by any key), the signature holds, and every event is the one it was signed with, in order."""
        return not self.problem and self.signed and self.signature_valid and self.chained and self.chain_consistent and not self.alterations

    @property
    def status(self) -> Verdict:
        if self.problem:
            return "unreadable"
        if self.alterations or not self.chain_consistent or (self.signed and not self.signature_valid):
            return "altered"
        if not self.chained:
            return "not chained"
        return "intact" if self.signed else "unsigned"

    def whose_key(self) -> str:
        if not self.signed:
            return "not signed"
        if self.this_desk:
            return f"this desk's key ({self.signer})"
        return f"another key, not this desk's: {self.signer}"

    def where(self) -> list[str]:
        """Each alteration of the events, in words, by index (the record's ``events`` count from 0)."""
        return [a.describe() for a in self.alterations]

    def summary(self) -> str:
        """One line: what it is, whose key, and the first alterations."""
        if self.problem:
            return f"cannot be checked: {self.problem}"
        head = {
            "intact": "intact",
            "altered": "ALTERED",
            "unsigned": "not signed (its chain holds, but anyone could have written it)",
            "not chained": "not chained (exported before chaining): nothing in it can be checked",
        }[self.status]
        where = self.where()
        if where:
            head += ": " + "; ".join(where[:5]) + (f"; and {len(where) - 5} more" if len(where) > 5 else "")
        elif self.status == "altered" and not self.chain_consistent:
            head += ": the listed chain does not add up (its digests or links were edited)"
        elif self.status == "altered":
            head += ": the signature does not match the run's details or the chain (edited after signing)"
        return f"{head} · signed with {self.whose_key()}" if self.signed else head

    def lines(self) -> list[str]:
        """The full report, for the terminal and the import's message."""
        if self.problem:
            return [self.summary()]
        out = [f"record: {self.summary()}", f"events: {self.events}"]
        if self.signed:
            state = "holds" if self.signature_valid else "DOES NOT HOLD (the run's details or the chain changed after signing)"
            out.append(f"signature: ed25519 by {self.whose_key()}; it {state}")
        else:
            out.append("signature: none")
        if self.chained:
            out.append("chain: " + ("every event matches the digest it was signed with" if not self.alterations else "broken"))
            out += [f"  - {w}" for w in self.where()]
            if not self.chain_consistent:
                out.append("  - the listed links and head do not follow from the listed digests")
        else:
            out.append(f"chain: none ({chain.NOT_CHAINED})")
        if self.stored:
            out.append(f"the exporting desk's store said of its chain: {self.stored}")
        return out


def verify_record(data: str | bytes, *, desk_public_raw: bytes | None = None) -> RecordCheck:
    """Check a record file's signature and chain; ``desk_public_raw`` (this desk's public key) names its own signatures."""
    try:
        raw = load_json(data, "the file")
    except (JsonTooDeepError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _unreadable(f"not JSON: {exc}")
    if not isinstance(raw, dict) or not isinstance(raw.get("events"), list):
        return _unreadable("not a DebateDesk run record (no list of events)")
    events = [e if isinstance(e, dict) else {"not an object": e} for e in raw["events"]]
    listed = raw.get("chain")
    chained = isinstance(listed, dict) and isinstance(listed.get("event_digests"), list)
    alterations: list[chain.Alteration] = []
    consistent = True
    if chained:
        assert isinstance(listed, dict)
        digests = [str(d) for d in listed["event_digests"]]
        alterations = chain.compare(digests, events)
        try:
            links = chain.links_of_digests(digests)
        except ValueError:  # a digest that is not hex
            links = []
        consistent = bool(links) and listed.get("links") == links and listed.get("head") == links[-1]
    signature = raw.get("signature")
    signed = isinstance(signature, dict)
    valid, signer, mine = False, "", False
    if signed:
        assert isinstance(signature, dict)
        public = str(signature.get("public_key", ""))
        try:
            public_raw = base64.b64decode(public, validate=True)
        except (binascii.Error, ValueError):
            public_raw = b""
        signer = fingerprint(public_raw) if len(public_raw) == 32 else "an unreadable key"
        valid = len(public_raw) == 32 and verify_signature(public, str(signature.get("value", "")), signed_part(raw))
        mine = desk_public_raw is not None and public_raw == desk_public_raw
    stored = str(listed.get("stored", "")) if isinstance(listed, dict) else ""
    return RecordCheck(
        events=len(events),
        chained=chained,
        chain_consistent=consistent,
        alterations=tuple(alterations),
        signed=signed,
        signature_valid=valid,
        signer=signer,
        this_desk=mine,
        stored=stored,
    )


def _unreadable(problem: str) -> RecordCheck:
    return RecordCheck(0, False, False, (), False, False, "", False, "", problem=problem)


__all__ = ["RecordCheck", "signed_part", "verify_record"]
