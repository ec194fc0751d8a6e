"""The embedded server takes a key made at its start and known only to the app: another local process cannot drive it."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pipelines.run.llm.embedded import server

# A stand-in for llama-server: answers /v1/models with its alias to a request bearing the key from its environment, 401 otherwise;
# /health to anyone, as llama-server does.
FAKE_SERVER = """#!{python}
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
port, alias = int(args[args.index("--port") + 1]), args[args.index("--alias") + 1]
key = os.environ.get("LLAMA_API_KEY", "")

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            self.send_response(200); self.end_headers(); self.wfile.write(b'{{"status": "ok"}}'); return
        if not key or self.headers.get("Authorization") != "Bearer " + key:
            self.send_response(401); self.end_headers(); return
        body = json.dumps({{"data": [{{"id": alias}}]}}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


@pytest.fixture
def fake_binary(tmp_path: Path) -> Path:
    """The stand-in, started under the name llama-server (its command line's first word), so the app knows it as one."""
    script = tmp_path / "fake_llama_server.py"
    script.write_text(FAKE_SERVER.format(python=sys.executable))
    path = tmp_path / "llama-server"
    path.write_text(f'#!/bin/bash\nexec -a "$0" {sys.executable} {script} "$@"\n')
    path.chmod(0o755)
    return path


def get(url: str, key: str = "") -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_server_gets_a_fresh_key_that_only_the_app_holds(tmp_path: Path, fake_binary: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"")
    cache = tmp_path / "cache"
    url = server.ensure_server(model, cache, n_threads=1, binary=str(fake_binary))
    try:
        state = server.read_state(cache)
        assert state is not None and len(state.api_key) >= 40
        assert get(f"{url}/models") == 401  # another local process, without the key
        assert get(f"{url}/models", "embedded") == 401  # nor with the old fixed one
        assert get(f"{url}/models", state.api_key) == 200
        assert stat.S_IMODE((cache / "server.json").stat().st_mode) == 0o600  # the key's file is its owner's alone
        cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes().decode()
        assert state.api_key not in cmdline  # every user can read a command line
        assert state.api_key not in repr(state)
        assert json.loads((cache / "server.json").read_text())["api_key"] == state.api_key
    finally:
        server._stop_owned_servers()


def test_the_app_talks_to_the_server_with_its_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pipelines.core.config import AppSettings, RunConfig
    from pipelines.run.llm.embedded import chat as embedded_chat

    state = server.ServerState(pid=1, port=4001, model="m", n_ctx=8192, kind="native", api_key="k" * 43)
    monkeypatch.setattr(embedded_chat, "_model_path", lambda spec, settings: tmp_path / "m.gguf")
    monkeypatch.setattr(server, "ensure_server", lambda *args, **kwargs: state.base_url)
    monkeypatch.setattr(server, "read_state", lambda cache: state)
    spec = RunConfig().with_backend("embedded").role("judge")
    chat = embedded_chat.build_embedded(spec, AppSettings(data_dir=tmp_path))
    assert chat.openai_api_key is not None and chat.openai_api_key.get_secret_value() == "k" * 43  # type: ignore[attr-defined]


BUILD = Path(server.__file__).with_name("build_llama_server.sh")


def test_the_llama_server_source_is_pinned_by_hash_for_the_pinned_version() -> None:
    pinned = next(
        line for line in (Path(__file__).parents[4] / "requirements.in").read_text().splitlines() if line.startswith("llama-cpp-python")
    )
    version = pinned.split("==")[1]
    assert re.search(rf"\[{re.escape(version)}\]=[0-9a-f]{{64}}\n", BUILD.read_text())
    assert "--require-hashes" in BUILD.read_text() and "sha256sum --check" in BUILD.read_text()


def test_a_version_without_a_pinned_hash_is_not_built(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(BUILD), sys.executable, "0.0.0", str(tmp_path / "out")], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "no pinned sha256 for llama-cpp-python 0.0.0" in done.stderr
    assert not (tmp_path / "out").exists()
