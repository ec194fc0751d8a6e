"""Notices: a claim assigned to someone, a comment that mentions them, others' reviews and publications of their claims;
read and unread; the webhook sends each committed change, signed, and nothing of a change rolled back."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from pipelines.newsroom.access.users import User
from pipelines.newsroom.notices import WEBHOOK_CONTEXT, Webhook, attach_webhook, mark_read, mentioned, mentioning, notices_for
from pipelines.newsroom.queue import ClaimQueue, NewClaim, QueueError
from pipelines.record.signing import desk_key
from pipelines.record.store import RunStore
from tests.pipelines.newsroom.test_queue import CLAIM, make_run
from tests.stores import store_url  # noqa: F401  (the fixture)

ANA = User("ana", "Ana Ruiz", "editor")
BO = User("bo", "Bo Lind", "checker")


@pytest.fixture
def stores(store_url: str) -> tuple[RunStore, ClaimQueue]:  # noqa: F811
    store = RunStore(store_url)
    return store, ClaimQueue(store.engine)


def test_mentions_are_read_by_account_first_name_or_whole_name() -> None:
    assert mentioned("thanks @bo, and @AnaRuiz. not ana@example.org") == {"bo", "anaruiz"}


def test_each_person_is_told_what_others_did_for_them_and_not_what_they_did(stores: tuple[RunStore, ClaimQueue]) -> None:
    store, queue = stores
    claim = queue.add(NewClaim(CLAIM), BO)
    queue.update(claim.id, ANA, assignee="Bo Lind")
    queue.comment(ANA, "@bo can you look at the ferry figures?", claim_id=claim.id)
    queue.comment(BO, "on it, @ana", claim_id=claim.id)
    make_run(store, "r1")
    queue.link_run("r1", CLAIM, BO, claim_id=claim.id)
    queue.review(claim.id, ANA, "SUPPORTED", "The ferry study found fewer cases.")
    kinds = [n.kind for n in notices_for(store.engine, BO)]
    assert sorted(kinds) == ["assigned", "mentioned", "reviewed"] and all(n.unread for n in notices_for(store.engine, BO))
    assert [n.kind for n in notices_for(store.engine, ANA)] == ["mentioned"], "Ana is told of Bo's mention, not of her own acts"
    assert mentioning(store.engine, BO) == {claim.id}
    mark_read(store.engine, BO)
    assert not any(n.unread for n in notices_for(store.engine, BO))
    queue.comment(ANA, "@BoLind one more thing", claim_id=claim.id)
    assert [n.kind for n in notices_for(store.engine, BO) if n.unread] == ["mentioned"]


class _Catch(BaseHTTPRequestHandler):
    got: ClassVar[list[tuple[dict[str, str], bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Catch.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_webhook_sends_each_committed_change_signed_and_nothing_rolled_back(tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Catch)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Catch.got.clear()
    try:
        store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
        attach_webhook(store.engine, Webhook(f"http://127.0.0.1:{server.server_port}/hook", tmp_path, wait=True))
        queue = ClaimQueue(store.engine)
        claim = queue.add(NewClaim(CLAIM), ANA)
        with pytest.raises(QueueError):
            queue.set_status(claim.id, "published", ANA)  # refused: nothing stored, nothing sent
        queue.update(claim.id, ANA, assignee="Bo Lind")
    finally:
        server.shutdown()
    assert [json.loads(body)["action"] for _, body in _Catch.got] == ["added", "changed"]
    headers, body = _Catch.got[1]
    assert json.loads(body)["detail"]["assignee"][1] == "Bo Lind" and json.loads(body)["by"] == "Ana Ruiz"
    public = desk_key(tmp_path).public_b64
    assert headers["x-debatedesk-key"] == public
    signature = base64.b64decode(headers["x-debatedesk-signature"].removeprefix("ed25519="))
    Ed25519PublicKey.from_public_bytes(base64.b64decode(public)).verify(signature, WEBHOOK_CONTEXT + body)  # raises if forged
