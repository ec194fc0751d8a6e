"""Work that reaches people: each person's notices (a claim assigned to them, a comment that mentions them, a claim of
theirs reviewed, published, corrected or withdrawn by someone else), read and unread; and an optional outgoing webhook
that tells the desk's chat tool of every change, signed with the desk's key.

Notices are read from what the queue already records (its history of changes and its comments), never written beside
it: there is no second record to drift from the first. A person's "read up to" time is the only thing kept
(``notice_reads``). A mention is ``@`` and the person's account, first name, or full name without spaces (``@bo``,
``@Bo``, ``@BoLind``), any case.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event, or_, select
from sqlalchemy.orm import Session

from pipelines.core.database.tables import CommentRow, NoticeReadRow, QueueChangeRow, QueueClaimRow
from pipelines.newsroom.access.users import User

log = logging.getLogger("debatedesk.notices")
MENTION = re.compile(r"(?<![\w@])@([A-Za-z][\w.-]{0,60})")
ABOUT_THEIR_CLAIMS = ("reviewed", "published", "corrected", "confirmed", "withdrawn", "joined")
WEBHOOK_TIMEOUT_S = 5.0
# Signed over this prefix and the body: a webhook's signature can never pass for a record's (which has its own prefix).
WEBHOOK_CONTEXT = b"debatedesk.webhook/v1\n"


@dataclass(frozen=True)
class Notice:
    kind: str  # assigned, mentioned, reviewed, published, corrected, confirmed, withdrawn, joined
    claim_id: str
    claim_text: str
    by: str
    at: float
    text: str  # what happened, in plain words (not escaped)
    unread: bool = True


def handles(user: User) -> set[str]:
    """How a comment may mention ``user``: the account, the first name, the name without spaces (lower case)."""
    name = " ".join(user.name.split())
    found = {user.username.lower(), name.lower().replace(" ", "")}
    if name:
        found.add(name.split()[0].lower())
    return {h for h in found if h}


def mentioned(text: str) -> set[str]:
    """The handles a text mentions (lower case, without the @)."""
    return {m.group(1).lower().rstrip(".-") for m in MENTION.finditer(text)}


def notices_for(engine: Engine, user: User, *, limit: int = 100) -> list[Notice]:
    """The person's notices, newest first: assignments to them, mentions of them, and what others did to claims they
    added, have, or reviewed. What the person did themselves is not a notice."""
    me = user.name
    read_until = _read_until(engine, me)
    found: list[Notice] = []
    with Session(engine) as s:
        texts = dict(s.execute(select(QueueClaimRow.id, QueueClaimRow.text)).tuples().all())
        mine = set(
            s.scalars(
                select(QueueClaimRow.id).where(
                    or_(QueueClaimRow.assignee == me, QueueClaimRow.created_by == me, QueueClaimRow.reviewed_by == me)
                )
            ).all()
        )
        changes = s.scalars(select(QueueChangeRow).where(QueueChangeRow.by != me).order_by(QueueChangeRow.id.desc()).limit(2000)).all()
        for change in changes:
            detail = json.loads(change.detail or "{}")
            assigned = detail.get("assignee")
            if isinstance(assigned, list) and len(assigned) == 2 and assigned[1] == me:
                found.append(_notice("assigned", change, texts, f"{change.by} assigned you a claim", read_until))
            elif change.action == "added" and detail.get("assignee") == me:
                found.append(_notice("assigned", change, texts, f"{change.by} added a claim for you", read_until))
            elif change.action in ABOUT_THEIR_CLAIMS and change.claim_id in mine:
                found.append(_notice(change.action, change, texts, f"{change.by} {change.action} a claim of yours", read_until))
        mine_handles = handles(user)
        comments = s.scalars(select(CommentRow).where(CommentRow.author != me).order_by(CommentRow.id.desc()).limit(2000)).all()
        for comment in comments:
            if mentioned(comment.text) & mine_handles:
                found.append(
                    Notice(
                        "mentioned",
                        comment.claim_id or "",
                        texts.get(comment.claim_id or "", "") or (f"run {comment.run_id}" if comment.run_id else ""),
                        comment.author,
                        comment.at,
                        f"{comment.author} mentioned you: {comment.text[:200]}",
                        comment.at > read_until,
                    )
                )
    return sorted(found, key=lambda n: n.at, reverse=True)[:limit]


def _notice(kind: str, change: QueueChangeRow, texts: dict[str, str], words: str, read_until: float) -> Notice:
    return Notice(kind, change.claim_id, texts.get(change.claim_id, ""), change.by, change.at, words, change.at > read_until)


def _read_until(engine: Engine, person: str) -> float:
    with Session(engine) as s:
        row = s.get(NoticeReadRow, person)
        return row.read_until if row is not None else 0.0


def mark_read(engine: Engine, user: User, until: float | None = None) -> None:
    """Every notice up to now (or ``until``) read, for this person."""
    until = time.time() if until is None else until
    with Session(engine) as s, s.begin():
        row = s.get(NoticeReadRow, user.name)
        if row is None:
            s.add(NoticeReadRow(person=user.name, read_until=until))
        else:
            row.read_until = max(row.read_until, until)


def mentioning(engine: Engine, user: User, claim_ids: Iterable[str] | None = None) -> set[str]:
    """The claims whose comments mention the person (for the "mentions of me" view)."""
    mine = handles(user)
    with Session(engine) as s:
        rows = s.execute(select(CommentRow.claim_id, CommentRow.text).where(CommentRow.claim_id.is_not(None))).tuples().all()
    wanted = set(claim_ids) if claim_ids is not None else None
    return {cid for cid, text in rows if cid and mentioned(text) & mine and (wanted is None or cid in wanted)}


# --- the outgoing webhook --------------------------------------------------------------------------


class Webhook:
    """POSTs each queue change, once its transaction has committed, to the desk's chat tool as JSON, signed with the desk's
    ed25519 key (header ``X-DebateDesk-Signature: ed25519=<base64>``, over ``WEBHOOK_CONTEXT`` and the exact body;
    ``X-DebateDesk-Key``, the public key, which the receiver checks against the one on the desk's Settings page); sent from
    a thread, never holding up the person; a failure is logged, never raised."""

    def __init__(self, url: str, data_dir: Path, *, wait: bool = False) -> None:
        self.url = url
        self.data_dir = data_dir
        self.wait = wait  # a command line that ends at once waits for its changes to go (at most the timeout each)

    def payload(self, change: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        from pipelines.record.signing import desk_key

        body = json.dumps({"from": "DebateDesk", **change}, ensure_ascii=False, sort_keys=True).encode()
        key = desk_key(self.data_dir)
        signature = base64.b64encode(key.private.sign(WEBHOOK_CONTEXT + body)).decode()
        headers = {
            "Content-Type": "application/json",
            "X-DebateDesk-Signature": f"ed25519={signature}",
            "X-DebateDesk-Key": key.public_b64,
        }
        return body, headers

    def send(self, changes: Sequence[dict[str, Any]]) -> threading.Thread:
        def post() -> None:
            for change in changes:
                try:
                    body, headers = self.payload(change)
                    request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
                    with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as answer:
                        answer.read(1024)
                except Exception as exc:  # the chat tool away, a bad address: the desk goes on, the log says so
                    log.warning("the webhook at %s did not take a change (%s: %s)", self.url, type(exc).__name__, exc)

        thread = threading.Thread(target=post, name="debatedesk-webhook", daemon=True)
        thread.start()
        if self.wait:
            thread.join(timeout=WEBHOOK_TIMEOUT_S * len(changes) + 1)
        return thread


_PENDING = "debatedesk.webhook.pending"
_HOOKED: dict[int, Webhook] = {}


def attach_webhook(engine: Engine, webhook: Webhook) -> None:
    """Send every queue change stored through ``engine``'s sessions to ``webhook`` after its transaction commits (once per
    engine; a rolled-back change is never sent)."""
    if id(engine) in _HOOKED:
        _HOOKED[id(engine)] = webhook
        return
    _HOOKED[id(engine)] = webhook

    @event.listens_for(Session, "before_flush")
    def collect(session: Session, _context: object, _instances: object) -> None:
        if session.get_bind() is not engine:
            return
        for obj in session.new:
            if isinstance(obj, QueueChangeRow):
                change = {
                    "claim_id": obj.claim_id,
                    "by": obj.by,
                    "action": obj.action,
                    "at": obj.at,
                    "detail": json.loads(obj.detail or "{}"),
                }
                session.info.setdefault(_PENDING, []).append(change)

    @event.listens_for(Session, "after_commit")
    def send(session: Session) -> None:
        pending = session.info.pop(_PENDING, [])
        hook = _HOOKED.get(id(engine))
        if pending and hook is not None:
            hook.send(pending)

    @event.listens_for(Session, "after_rollback")
    def drop(session: Session) -> None:
        session.info.pop(_PENDING, None)
