"""Test connection: does a role's model answer where it is configured? Fast, and clear about why not.

No model is run: `fake` needs nothing, `embedded` is checked on disk (the prepared model file,
llama.cpp installed, a server already running), and `openai` is asked for its model list
(``GET {base_url}/models``) with a short deadline that covers the name lookup too, so an
offline machine gets its answer in seconds, not after a model call's timeout.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from pipelines.core.config import AppSettings, ModelSpec, openai_env
from pipelines.core.text.urls import scrub_url
from pipelines.run.llm.registry import get_backend

OPENAI_URL = "https://api.openai.com/v1"
TIMEOUT_S = 5.0

Fetch = Callable[[urllib.request.Request, float], bytes]


@dataclass(frozen=True)
class ConnectionReport:
    """What the test found: ok or not, where it looked, what it means and how to fix it."""

    ok: bool
    backend: str
    endpoint: str  # without credentials
    message: str
    models: tuple[str, ...] = ()
    seconds: float = 0.0


def check_connection(
    spec: ModelSpec, settings: AppSettings, *, timeout_s: float = TIMEOUT_S, fetch: Fetch | None = None
) -> ConnectionReport:
    """Whether ``spec``'s backend can be reached; never raises for an unreachable or refusing endpoint."""
    started = time.monotonic()
    backend = get_backend(spec.backend)  # an unknown name raises, listing the valid ones
    if spec.backend == "fake":
        report = ConnectionReport(True, "fake", "(none)", "The fake backend needs no connection. It is not a real model.")
    elif spec.backend == "embedded":
        report = _check_embedded(settings)
    elif spec.backend == "openai":
        report = _check_openai(spec, timeout_s, fetch or _fetch)
    else:
        report = ConnectionReport(True, backend.name, "(unknown)", f"{backend.name} has no connection test; start a run to try it.")
    return ConnectionReport(**{**report.__dict__, "seconds": time.monotonic() - started})


def _check_embedded(settings: AppSettings) -> ConnectionReport:
    from pipelines.run.llm.embedded.model_files import INSTALL_HINT, MODEL_FILE, is_prepared
    from pipelines.run.llm.embedded.server import is_live, read_state

    where = str(settings.model_cache / "models" / MODEL_FILE)
    if importlib.util.find_spec("llama_cpp") is None:
        return ConnectionReport(False, "embedded", where, f"llama.cpp (llama-cpp-python) is not installed: {INSTALL_HINT}.")
    if not is_prepared(settings.model_cache):
        return ConnectionReport(False, "embedded", where, f"The model file is not prepared yet: {INSTALL_HINT}.")
    server = read_state(settings.model_cache)
    running = server is not None and is_live(server)
    note = (
        f"its llama.cpp server is running on port {server.port}"
        + (
            f" (llama.cpp's own llama-server, {server.slots} calls at once)"
            if server.kind == "native"
            else " (the Python server, one call at a time)"
        )
        if running and server
        else "its server starts with the first run (about 10 s)"
    )
    return ConnectionReport(True, "embedded", where, f"The embedded model is prepared; {note}.")


def _check_openai(spec: ModelSpec, timeout_s: float, fetch: Fetch) -> ConnectionReport:
    env_url, env_key = openai_env()
    base = (spec.base_url or env_url or OPENAI_URL).rstrip("/")
    key = spec.api_key.get_secret_value() or env_key
    shown = scrub_url(base)
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ConnectionReport(False, "openai", shown, "The base URL must look like http://host:port/v1 (with http:// or https://).")
    if parts.hostname == "api.openai.com" and not key:
        return ConnectionReport(False, "openai", shown, "OpenAI needs an API key: enter one in the API key field or set OPENAI_API_KEY.")
    request = urllib.request.Request(base + "/models", headers={"Accept": "application/json"})
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        body = _within(timeout_s, lambda: fetch(request, timeout_s))
    except TimeoutError:
        return ConnectionReport(
            False, "openai", shown, f"No answer from {parts.hostname} within {timeout_s:g} s: is the server up and the address right?"
        )
    except urllib.error.HTTPError as exc:
        return ConnectionReport(False, "openai", shown, _http_problem(exc.code))
    except (urllib.error.URLError, OSError) as exc:
        return ConnectionReport(False, "openai", shown, _network_problem(getattr(exc, "reason", exc), parts.hostname, parts.port))
    try:
        data = json.loads(body)
        models = tuple(sorted(str(m["id"]) for m in data.get("data", []) if isinstance(m, dict) and "id" in m))
    except (ValueError, AttributeError, TypeError):
        return ConnectionReport(
            False, "openai", shown, "Something answered, but not with an OpenAI model list: does the base URL end in /v1?"
        )
    wanted = spec.model or ("gpt-4o-mini" if parts.hostname == "api.openai.com" else "")
    listed = ", ".join(models[:12]) + (" …" if len(models) > 12 else "")
    if not wanted:
        return ConnectionReport(
            True, "openai", shown, f"Connected. Name the model to use; this server offers: {listed or 'none listed'}.", models
        )
    if models and wanted not in models:
        return ConnectionReport(False, "openai", shown, f"Connected, but the server has no model {wanted!r}. It offers: {listed}.", models)
    return ConnectionReport(True, "openai", shown, f"Connected: {wanted!r} is available.", models)


def _fetch(request: urllib.request.Request, timeout_s: float) -> bytes:
    context = ssl.create_default_context()
    with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:  # http(s) only: checked by the caller
        return bytes(response.read(1_000_000))


def _within(timeout_s: float, call: Callable[[], bytes]) -> bytes:
    """``call()`` given at most ``timeout_s`` (+1 s) in all: a socket timeout does not bound the name lookup."""
    result: list[bytes] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the caller below
            error.append(exc)

    worker = threading.Thread(target=target, daemon=True, name="connection-test")
    worker.start()
    worker.join(timeout_s + 1)
    if worker.is_alive():
        raise TimeoutError
    if error:
        raise error[0]
    return result[0]


def _http_problem(code: int) -> str:
    if code in (401, 403):
        return f"The server refused the API key (HTTP {code}): check the key, or that this account may use the API."
    if code == 404:
        return "The server has no model list at this address (HTTP 404): does the base URL end in /v1?"
    if code == 429:
        return "The server says too many requests or no credit left (HTTP 429): check the account's quota."
    return f"The server answered HTTP {code}: check the base URL, or try again later."


def _network_problem(reason: object, host: str, port: int | None) -> str:
    where = f"{host}:{port}" if port else host
    if isinstance(reason, socket.gaierror):
        return f"Could not look up {host}: this machine seems offline, or the address is mistyped."
    if isinstance(reason, ConnectionRefusedError):
        return f"Nothing is listening at {where}: is the server running, on this port?"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"No answer from {where} in time: is the server up and the address right?"
    if isinstance(reason, ssl.SSLError):
        return f"The secure connection to {host} failed ({reason.__class__.__name__}): is it http:// rather than https://?"
    return f"Could not reach {where}: {reason}."
