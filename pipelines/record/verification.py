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
import enum
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import JsonTooDeepError, load_json
from pipelines.record import chain
from pipelines.record.signing import fingerprint, verify_signature

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


# --- what an auditor's script can trust: the exit status of ``verify-record`` ---------------------------------


class Outcome(enum.IntEnum):
    """``verify-record``'s exit status: 0 only for an intact record signed with a key the checker trusts (docs/security.md)."""

    TRUSTED = 0  # intact, and signed with this desk's key, the key named by --expect, or one in --trusted-keys
    ALTERED = 1  # an event, the run's details or the chain changed after signing (or the signature does not hold)
    USAGE = 2  # no such file, an unreadable trusted-keys file, a bad option: nothing was checked
    UNTRUSTED_KEY = 3  # intact, but signed with a key that is none of those: anyone with a key could have made it
    UNSIGNED = 4  # no signature (or no chain): anyone could have written it
    UNREADABLE = 5  # not JSON, not a DebateDesk record, or larger than the limit


class TrustedKeysError(DebateDeskError, ValueError):
    """The trusted-keys file cannot be read; the message says which line and why."""


def read_trusted_keys(path: Path) -> dict[str, str]:
    """An auditor's trusted keys: fingerprint -> the name given it.

    One key a line: its fingerprint as ``verify-record`` and the Settings page print it
    (``SHA256:...``), or its public key in base64 (the ``public_key`` of a signed record),
    then optionally a name; blank lines and lines starting with ``#`` are skipped.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TrustedKeysError(f"cannot read the trusted keys file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    keys: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, name = line.partition(" ")
        if word.startswith("SHA256:") and len(word) == len("SHA256:") + 43:
            keys[word] = name.strip()
            continue
        try:
            raw = base64.b64decode(word, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != 32:
            raise TrustedKeysError(
                f"{path}, line {number}: {word[:60]!r} is neither a key fingerprint (SHA256:...) nor a base64 ed25519 public key"
            )
        keys[fingerprint(raw)] = name.strip()
    return keys


def read_record_file(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes, or None when it is larger than ``max_bytes`` (known from its size, never by reading it all)."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size > max_bytes:
            return None
        data = handle.read(max_bytes + 1)  # a file that grows while it is read is cut here, and refused
    return None if len(data) > max_bytes else data


def judge(check: RecordCheck, trusted: dict[str, str], *, expect: str = "") -> tuple[Outcome, str]:
    """The exit status for ``check`` and why, in one plain line.

    ``trusted`` holds the fingerprints the checker trusts besides this desk's own (-> a name or "");
    ``expect`` names the one key it must be signed with, and then nothing else is trusted.
    """
    if check.problem:
        return Outcome.UNREADABLE, f"not checked: {check.problem}"
    if check.status == "altered":
        return Outcome.ALTERED, "ALTERED: the record was changed after it was signed"
    if not check.signed:
        return Outcome.UNSIGNED, "NOT TRUSTED: the record is not signed; anyone could have written it"
    if not check.chained:
        return Outcome.UNSIGNED, "NOT TRUSTED: the record is not chained; its events cannot be checked"
    if expect:
        if check.signer == expect:
            return Outcome.TRUSTED, f"trusted: intact and signed with the expected key {expect}"
        return Outcome.UNTRUSTED_KEY, f"NOT TRUSTED: expected a signature by {expect}; it is signed by {check.signer}"
    if check.this_desk:
        return Outcome.TRUSTED, f"trusted: intact and signed with this desk's key ({check.signer})"
    if check.signer in trusted:
        name = trusted[check.signer]
        return Outcome.TRUSTED, f"trusted: intact and signed with a trusted key{f' ({name})' if name else ''}: {check.signer}"
    return (
        Outcome.UNTRUSTED_KEY,
        f"NOT TRUSTED: intact, but signed with {check.signer}, which is not this desk's key nor one you trust "
        "(name it with --expect, or list it in a --trusted-keys file)",
    )


__all__ = [
    "Outcome",
    "RecordCheck",
    "TrustedKeysError",
    "judge",
    "read_record_file",
    "read_trusted_keys",
    "signed_part",
    "verify_record",
]
