"""Test connection: each backend's check is fast, never runs a model, never reaches the network, and says how to fix what fails."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import SecretStr

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import UnknownBackendError
from pipelines.run.llm.connection import check_connection


@pytest.fixture
def settings(tmp_path: Path) -> AppSettings:
    return AppSettings(data_dir=tmp_path / "data", model_cache=tmp_path / "cache")


@pytest.fixture(autouse=True)
def no_env_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


class ModelList(BaseHTTPRequestHandler):
    """A local OpenAI-compatible server's /v1/models; a request without the key gets 401 when a key is required."""

    key: ClassVar[str] = ""
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        ModelList.seen.append(self.headers.get("Authorization", ""))
        if self.key and self.headers.get("Authorization") != f"Bearer {self.key}":
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps({"object": "list", "data": [{"id": "qwen2.5:1.5b"}, {"id": "llama3.2:1b"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ModelList)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    ModelList.key, ModelList.seen = "", []
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens there


def test_fake_needs_no_connection(settings: AppSettings) -> None:
    report = check_connection(ModelSpec(backend="fake"), settings)
    assert report.ok and "not a real model" in report.message


def test_an_unknown_backend_lists_the_valid_ones(settings: AppSettings) -> None:
    with pytest.raises(UnknownBackendError, match="choose one of: embedded, fake, openai"):
        check_connection(ModelSpec(backend="gpt9"), settings)


def test_embedded_not_prepared_says_how_to_prepare_it(settings: AppSettings) -> None:
    report = check_connection(ModelSpec(backend="embedded"), settings)
    assert not report.ok and ("make run" in report.message or "not installed" in report.message)
    assert report.seconds < 2  # a look on disk, no model started


def test_embedded_says_which_server_runs_it(settings: AppSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.run.llm.embedded import model_files, server

    monkeypatch.setattr(model_files, "is_prepared", lambda cache: True)
    monkeypatch.setattr(server, "is_live", lambda state: True)
    settings.model_cache.mkdir(parents=True)
    server.write_state(settings.model_cache, server.ServerState(pid=1, port=4321, model="m", n_ctx=8192, kind="native", slots=4))
    native = check_connection(ModelSpec(backend="embedded"), settings)
    server.write_state(settings.model_cache, server.ServerState(pid=1, port=4321, model="m", n_ctx=8192))
    python = check_connection(ModelSpec(backend="embedded"), settings)

    assert native.ok and "port 4321 (llama.cpp's own llama-server, 4 calls at once)" in native.message
    assert python.ok and "(the Python server, one call at a time)" in python.message


def test_a_local_server_lists_its_models(settings: AppSettings, server: str) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=server, model="qwen2.5:1.5b"), settings)
    assert report.ok and "'qwen2.5:1.5b' is available" in report.message
    assert report.models == ("llama3.2:1b", "qwen2.5:1.5b")


def test_a_model_the_server_does_not_have_is_named_with_the_ones_it_has(settings: AppSettings, server: str) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=server, model="gpt-4o-mini"), settings)
    assert not report.ok and "no model 'gpt-4o-mini'" in report.message and "qwen2.5:1.5b" in report.message


def test_no_model_named_lists_what_the_server_offers(settings: AppSettings, server: str) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=server), settings)
    assert report.ok and "Name the model" in report.message and "llama3.2:1b" in report.message


def test_a_refused_key_says_to_check_the_key_and_never_shows_it(settings: AppSettings, server: str) -> None:
    ModelList.key = "right-key"
    report = check_connection(ModelSpec(backend="openai", base_url=server, api_key=SecretStr("sk-wrong-key")), settings)
    assert not report.ok and "refused the API key (HTTP 401)" in report.message
    assert "sk-wrong-key" not in report.message + report.endpoint
    assert ModelList.seen == ["Bearer sk-wrong-key"]


def test_a_wrong_path_asks_about_v1(settings: AppSettings, server: str) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=server.removesuffix("/v1") + "/api", model="x"), settings)
    assert not report.ok and "end in /v1" in report.message


def test_nothing_listening_fails_at_once(settings: AppSettings) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m"), settings)
    assert not report.ok and "Nothing is listening" in report.message and report.seconds < 2


def test_offline_fails_fast_and_says_so(settings: AppSettings, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    report = check_connection(ModelSpec(backend="openai", api_key=SecretStr("sk-test-1234")), settings)
    assert not report.ok and "offline" in report.message and report.endpoint == "https://api.openai.com/v1"
    assert report.seconds < 2


def test_a_hanging_lookup_is_cut_off_at_the_deadline(settings: AppSettings) -> None:
    def hangs(request: urllib.request.Request, timeout: float) -> bytes:
        time.sleep(30)
        return b""

    report = check_connection(
        ModelSpec(backend="openai", base_url="http://slow.example/v1", model="m"), settings, timeout_s=0.2, fetch=hangs
    )
    assert not report.ok and "within 0.2 s" in report.message and report.seconds < 3


def test_openai_without_a_key_fails_before_any_request(settings: AppSettings) -> None:
    def never(request: urllib.request.Request, timeout: float) -> bytes:
        raise AssertionError("no request without a key")

    report = check_connection(ModelSpec(backend="openai"), settings, fetch=never)
    assert not report.ok and "needs an API key" in report.message


@pytest.mark.parametrize("url", ["localhost:11434/v1", "ftp://host/v1", "http:///v1"])
def test_a_malformed_base_url_says_what_it_should_look_like(settings: AppSettings, url: str) -> None:
    report = check_connection(ModelSpec(backend="openai", base_url=url), settings)
    assert not report.ok and "http://host:port/v1" in report.message


def test_credentials_in_the_base_url_are_never_shown(settings: AppSettings, server: str) -> None:
    with_user = server.replace("http://", "http://user:hunter22@")
    report = check_connection(ModelSpec(backend="openai", base_url=with_user, model="qwen2.5:1.5b"), settings)
    assert "hunter22" not in report.endpoint + report.message
