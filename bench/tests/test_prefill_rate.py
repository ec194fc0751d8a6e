"""bench/prefill_rate.py asks the app's llama.cpp server with the server's own key, as the app does (else HTTP 401)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

from bench.prefill_rate import served
from tests.fakes import send_json


class _Server(BaseHTTPRequestHandler):
    """Answers as llama-server does: only the key it was started with, a reply with its timings."""

    key = "s3cret"
    got: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Server.got.append(body)
        if self.headers.get("Authorization") != f"Bearer {self.key}":
            self.send_response(401)
            self.end_headers()
            return
        send_json(self, 200, {"choices": [], "timings": {"prompt_n": 840, "prompt_ms": 5600.0}})

    def log_message(self, *args: object) -> None:
        pass


def test_a_prompt_is_sent_with_the_servers_key_and_its_timings_come_back() -> None:
    server = HTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Server.got.clear()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        timings = served(url, "s3cret", "Reading 1. A prompt.", max_tokens=1, logprobs=True)
    finally:
        server.shutdown()
    assert timings == {"prompt_n": 840, "prompt_ms": 5600.0}
    assert _Server.got[0]["max_tokens"] == 1 and _Server.got[0]["top_logprobs"] == 10
