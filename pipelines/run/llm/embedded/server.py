"""The embedded model's server process: start a llama.cpp server on loopback, share it, stop it.

``ensure_server`` starts llama.cpp's own ``llama-server`` (built by ``make model`` from the
llama.cpp source the pinned llama-cpp-python carries: see ``native_server_binary``) with
parallel slots, or, where that binary is missing, ``python -m pipelines.run.llm.embedded.grammar_server``
(llama_cpp.server with a faster grammar sampler, one call at a time), on 127.0.0.1; or it
reuses one that this or another process already started for the same model (``server.json``
in the model cache, guarded by a file lock). A server this process started is stopped with it.

Why the native server (bench/embedded_speed.py, docs/measurements/2026-11-24-embedded-speed.md):
it decodes several calls together (continuous batching: debaters of a round, scorers and
panels already call at once), keeps each slot's prompt for the next call that shares its
prefix, and gives token log-probabilities without keeping every position's logits.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil
from filelock import FileLock

from pipelines.core.config import LLAMA_CACHE_RAM_MIB
from pipelines.core.errors import BackendUnavailableError
from pipelines.core.machine import default_threads

SERVER_MODULE = "pipelines.run.llm.embedded.grammar_server"
NATIVE_NAME = "llama-server"
# How a running server is recognised: ours, ours under its former module name, or plain llama_cpp.server
# (the native one by its program's name, see _is_llama_server).
SERVER_NAMES = (SERVER_MODULE, "pipelines.run.llm.llama_server", "llama_cpp.server")
# Where `make model` builds llama.cpp's server (see the Makefile); DEBATEDESK_LLAMA_SERVER names another.
NATIVE_BINARY = Path(__file__).resolve().parents[4] / "build" / "llama.cpp" / "bin" / NATIVE_NAME
# Held (flock) while llama.cpp is being compiled, as `make run` does in the background on a first start (the Makefile).
BUILD_LOCK = NATIVE_BINARY.parents[1] / ".build.lock"
BUILD_WAIT_S = 1200.0  # the whole server build took 148-240 s on 2 quiet cores; a busy machine may take several times that
DEFAULT_N_CTX = 8192
MAX_SLOTS = 4
DEFAULT_CACHE_RAM_MIB = LLAMA_CACHE_RAM_MIB
STARTUP_TIMEOUT_S = 180.0
PROBE_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 10.0
# How long the native server has to answer its health check before a call that timed out on it
# counts it as hung (llama-server answers /health at once, even with every slot generating).
HEALTH_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ServerState:
    """What ``server.json`` records about a running server."""

    pid: int
    port: int
    model: str
    n_ctx: int
    logprobs: bool = False
    kind: str = "python"  # or "native": llama.cpp's llama-server
    slots: int = 1
    # Made at start and known only to the app (server.json is its owner's alone): other local processes cannot drive the server.
    api_key: str = field(default="", repr=False)

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
    n_slots: int | None = None,
    binary: str = "",
    cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB,
) -> str:
    """The base URL of a live llama.cpp server for ``model_path``, started if none is running.

    ``logprobs=True`` asks for a server that can return token log-probabilities (label
    probabilities). The native server always can, at no cost. The Python one then keeps
    every position's logits, which costs about 0.6 MB of memory per token of context with
    Qwen's vocabulary and slows prompt reading, so it is off there unless asked for. A
    server that has it also serves calls that do not need it.
    ``binary``: the llama-server program ("" for the one `make model` built, "python" for
    the Python server even where that exists); see ``native_server_binary``.
    ``cache_ram_mib``: the native server's host prompt cache (``--cache-ram``), in MiB.
    """
    model = model_path.resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    native = native_server_binary(binary)
    if native is None and not binary and build_in_progress():
        native = wait_for_build()  # `make run` builds llama-server in the background: a first claim waits for it
    with FileLock(cache_dir / "server.lock"):
        state = read_state(cache_dir)
        # The Python server stood in while llama-server was being built (`make run` builds it in the background):
        # once the program is there, the next run starts it.
        upgrade = state is not None and state.kind == "python" and native is not None
        fits = state and state.model == str(model) and state.n_ctx >= n_ctx and (state.logprobs or not logprobs)
        if state and fits and not upgrade and is_live(state):
            return state.base_url
        # A dead server's record is replaced; a live one that does not fit is left running
        # (another app may be using it) and simply stops being the recorded one.
        _reap_dead()
        threads = n_threads or default_threads()
        if native is not None:
            state = _start_server(model, cache_dir, n_ctx, True, threads, n_slots or default_slots(threads), native, cache_ram_mib)
        else:
            state = _start_server(model, cache_dir, n_ctx, logprobs, threads, 1, None)
        write_state(cache_dir, state)
        return state.base_url


def _reap_dead() -> None:
    """Forget the servers this process started that have died (killed, crashed), collecting their exit status.

    Without it each one stays in the process table as a zombie for the life of the app, and a
    desk whose server died and was started again mid-run (pipelines/run/server_restart.py) would
    collect one per death.
    """
    for entry in [entry for entry in _OWNED if entry[1].poll() is not None]:
        _OWNED.remove(entry)


def stop_server(cache_dir: Path) -> bool:
    """Stop the recorded server (whoever started it) and any this process started there.

    True if one was running.
    """
    key = cache_dir.resolve()
    stopped = False
    with FileLock(cache_dir / "server.lock"):
        state = read_state(cache_dir)
        for entry in [entry for entry in _OWNED if entry[0] == key]:
            _OWNED.remove(entry)
            stopped |= entry[1].poll() is None
            _terminate(entry[1])
        if state and _is_llama_server(state.pid, state.port):
            _terminate_pid(state.pid)
            stopped = True
        (cache_dir / "server.json").unlink(missing_ok=True)
    return stopped


def default_slots(threads: int | None = None) -> int:
    """Parallel slots of the native server: one on up to 2 threads, else one per thread, at most MAX_SLOTS.

    Measured side by side on this 2-core machine (bench/embedded_speed.py, 2 threads, the
    quietest run of 2026-11-24): 4 calls together gave 32.5 tokens/s in total against 30.3 one
    at a time (1.07x: two cores are busy computing, not waiting on memory), and 3 of the 6
    calls decoded together answered differently from the same calls decoded alone (one label
    changed): a batch rounds differently. So on 2 threads calls queue, as they did on the
    Python server, and each answer is the one-at-a-time answer. More threads get more slots
    (not measured here); ``DEBATEDESK_LLAMA_SLOTS`` sets any count. Each slot has the whole
    context (one shared cache: about 28 KB of memory per token with Qwen2.5-1.5B).
    """
    count = threads or default_threads()
    return 1 if count <= 2 else min(MAX_SLOTS, count)


def native_server_binary(binary: str = "") -> Path | None:
    """llama.cpp's ``llama-server`` program, or None for the Python server.

    ``binary`` (the ``llama_server`` setting): "" for the one ``make model`` builds into
    ``build/llama.cpp/bin`` (None when it is missing, as after a failed build: the Python
    server then serves), "python" for the Python server, or the path of another build.
    A path that is not an executable file is an error, not a silent fallback.
    """
    if binary == "python":
        return None
    if binary:
        path = Path(binary).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BackendUnavailableError(
                f"the llama-server program {binary!r} is not an executable file; leave the setting empty or build it with `make model`"
            )
        return path
    return NATIVE_BINARY if NATIVE_BINARY.is_file() and os.access(NATIVE_BINARY, os.X_OK) else None


def build_in_progress(lock: Path | None = None) -> bool:
    """Whether llama.cpp is being compiled right now (the build holds ``BUILD_LOCK``; nobody holds it otherwise)."""
    path = lock or BUILD_LOCK
    if not path.exists():
        return False
    with path.open("rb") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(held, fcntl.LOCK_UN)
    return False


def wait_for_build(lock: Path | None = None, timeout_s: float = BUILD_WAIT_S) -> Path | None:
    """Wait for the llama.cpp build in progress, then the llama-server it built (None: it failed, or took too long).

    Why a first claim waits rather than start the Python server meanwhile: when this was written, the Python server
    crashed here on any prompt of two tokens or more. That was the AMX build (build_llama_server.sh, fixed since), so the
    Python server could now stand in and ``ensure_server``'s upgrade would move the next run to llama-server; not tried.
    """
    deadline = time.monotonic() + timeout_s
    while build_in_progress(lock) and time.monotonic() < deadline:
        time.sleep(1.0)
    return native_server_binary()


def python_server_command(model: Path, port: int, *, n_ctx: int, threads: int, slots: int = 1, logprobs: bool = False) -> list[str]:
    """The Python server's command line (llama_cpp.server with grammar-first decoding; one call at a time)."""
    del slots  # it has one sequence
    return [
        # llama_cpp.server, with schema-enforced answers decoded grammar-first (see grammar_server.py).
        sys.executable, "-m", SERVER_MODULE,
        "--model", str(model),
        # The alias is what /v1/models reports: the readiness probe checks it, so a
        # stranger that grabbed the port first is not mistaken for our server.
        "--model_alias", model.stem,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        # The server's default is true; see ensure_server for what it costs.
        "--logits_all", "true" if logprobs else "false",
        # The server's default is true: any new request silently ends a stream in
        # progress (it sends [DONE] with no error). Requests must queue instead.
        "--interrupt_requests", "false",
    ]  # fmt: skip


def native_server_command(
    model: Path,
    port: int,
    *,
    n_ctx: int,
    threads: int,
    slots: int,
    logprobs: bool = True,
    binary: Path | None = None,
    cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB,
) -> list[str]:
    """llama.cpp's own server: ``slots`` calls decoded together, each with ``n_ctx`` tokens of context."""
    del logprobs  # always available: llama-server computes them for the tokens asked about only
    return [
        str(binary or NATIVE_BINARY),
        "--model", str(model),
        "--alias", model.stem,  # what /v1/models reports (see python_server_command)
        "--host", "127.0.0.1",
        "--port", str(port),
        "--threads", str(threads),
        "--threads-batch", str(threads),
        "--parallel", str(slots),
        # One cache for all slots, big enough for every slot's full context at once.
        "--kv-unified",
        "--ctx-size", str(n_ctx * slots),
        "--cont-batching",
        # Prompts are cached per slot (cache_prompt is on by default); a new call goes to the
        # slot whose cached prompt it shares most with, and chunks of at least 256 tokens
        # further on are reused by shifting them instead of reading them again.
        "--cache-reuse", "256",
        # Prompts of calls gone by are kept in host memory, to be read back by a later call that
        # starts the same way, up to this many MiB. llama.cpp's default (8192) let the server grow
        # from 2.2 GB to 10.8 GB over 125 desk claims for a 1.1 GB model; the cap is measured in
        # docs/measurements/2026-11-26-server-memory.md.
        "--cache-ram", str(cache_ram_mib),
        # llama-server's "auto" computes attention differently from llama-cpp-python's default
        # (off): SmolLM2's next-token log-probabilities moved by about 0.07 and greedy answers
        # changed after a few tokens. Off, they are the library's.
        "--flash-attn", "off",
        "--no-webui",
        "--jinja",  # the chat template from the GGUF, as llama-cpp-python formats it
    ]  # fmt: skip


def _start_server(
    model: Path,
    cache_dir: Path,
    n_ctx: int,
    logprobs: bool,
    n_threads: int,
    slots: int,
    native: Path | None,
    cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB,
) -> ServerState:
    port = _free_port()
    key = secrets.token_urlsafe(32)
    if native is not None:
        command = native_server_command(
            model, port, n_ctx=n_ctx, threads=n_threads, slots=slots, binary=native, cache_ram_mib=cache_ram_mib
        )
    else:
        command = python_server_command(model, port, n_ctx=n_ctx, threads=n_threads, logprobs=logprobs)
    log_path = cache_dir / "server.log"
    with log_path.open("ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n".encode())
        log.flush()
        # Same process group as the app on purpose: a Ctrl+C or a closed terminal stops
        # the server too, even when the app dies before its atexit hook can run.
        root = str(Path(__file__).resolve().parents[4])  # so `-m pipelines...` imports wherever the app was started
        env = server_environment(os.environ) | {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))}
        # The key goes in the environment, not the command line: /proc/PID/cmdline is every user's to read, environ its owner's.
        env |= {"LLAMA_API_KEY": key, "API_KEY": key}  # llama-server's variable; llama_cpp.server's settings read API_KEY
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    _OWNED.append((cache_dir.resolve(), process))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _answers(port, model.stem, key):
        if process.poll() is not None:
            hint = (
                "is the build complete? (`make model`; set DEBATEDESK_LLAMA_SERVER=python for the Python server)"
                if native
                else "is llama-cpp-python[server] installed?"
            )
            raise BackendUnavailableError(
                f"the llama.cpp server exited with code {process.returncode} while loading {model.name}; "
                f"{hint} Last lines of {log_path}:\n{_tail(log_path)}"
            )
        if time.monotonic() > deadline:
            _terminate(process)
            raise BackendUnavailableError(
                f"the llama.cpp server did not answer within {STARTUP_TIMEOUT_S:.0f} s; see {log_path}:\n{_tail(log_path)}"
            )
        time.sleep(0.5)
    kind = "native" if native is not None else "python"
    return ServerState(pid=process.pid, port=port, model=str(model), n_ctx=n_ctx, logprobs=logprobs, kind=kind, slots=slots, api_key=key)


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The app's environment without what would override the server's command line.

    llama_cpp.server takes its address from ``HOST`` and ``PORT`` before its own ``--host`` and ``--port``
    (``make run PORT=8503`` puts PORT=8503 there: the Python server then tried the app's own port and died),
    and reads each of its settings from a variable of the same name (``MODEL``, ``N_CTX``, ``CONFIG_FILE``...);
    llama-server reads ``LLAMA_ARG_*``. The server is started with every setting on its command line, so none of these
    from the shell belongs to it.
    """
    from llama_cpp.server.settings import ModelSettings, ServerSettings  # the Python server's own settings, by name

    theirs = {name.upper() for model in (ModelSettings, ServerSettings) for name in model.model_fields} | {"CONFIG_FILE"}
    return {k: v for k, v in environ.items() if k.upper() not in theirs and not k.startswith("LLAMA_ARG_")}


@atexit.register
def _stop_owned_servers() -> None:
    """Stop every server this process started: the embedded model is stopped with the app."""
    # No file lock here: exit must not wait behind another process's 3-minute startup.
    for cache_dir, process in _OWNED:
        _terminate(process)
        state = read_state(cache_dir)
        if state and state.pid == process.pid:
            (cache_dir / "server.json").unlink(missing_ok=True)
    _OWNED.clear()


def is_live(state: ServerState) -> bool:
    """Whether the recorded server still runs and listens; a busy server counts as live."""
    # Not an HTTP probe: llama-cpp-python answers even /v1/models only between
    # generations (it takes the model lock), so a server busy with a long answer would
    # look dead and a second one would be started beside it (see the package docstring).
    return _is_llama_server(state.pid, state.port) and _port_open(state.port)


def responds(state: ServerState, timeout_s: float = HEALTH_TIMEOUT_S) -> bool:
    """Whether the native server answers its health check within ``timeout_s``.

    llama-server answers ``/health`` on its own HTTP threads without waiting for a slot, so a
    busy server answers and a hung one (stopped, stuck, starved of memory) does not. The Python
    server answers nothing while it generates: it is never asked (see ``is_live``).
    """
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{state.port}/health", timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (OSError, ValueError):  # refused, timed out, an HTTP error (503 while loading)
        return False


def stop_unresponsive(cache_dir: Path, state: ServerState, timeout_s: float = HEALTH_TIMEOUT_S) -> bool:
    """Kill the recorded server if it is still ``state`` and does not answer its health check; True if it was.

    Killed, not asked to stop: a hung process does not act on a polite signal (a stopped one
    not at all). Its record goes with it, so the next start begins a new server.
    """
    with FileLock(cache_dir / "server.lock"):
        current = read_state(cache_dir)
        if current is None or (current.pid, current.port) != (state.pid, state.port) or not _is_llama_server(state.pid, state.port):
            return False  # replaced or gone meanwhile: nothing hung to stop
        if responds(current, timeout_s):
            return False
        owned = [entry for entry in _OWNED if entry[1].pid == state.pid]
        for entry in owned:  # ours: killed and collected (no zombie)
            _OWNED.remove(entry)
            entry[1].kill()
            entry[1].wait()
        if not owned:  # another process's: killed by pid (once ours is collected, its pid may be another's)
            with suppress(psutil.NoSuchProcess):
                psutil.Process(state.pid).kill()
        (cache_dir / "server.json").unlink(missing_ok=True)
    return True


def _answers(port: int, alias: str, key: str = "") -> bool:
    """Whether our freshly started server (known by its model alias, and taking our key) answers on ``port``."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
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


def read_state(cache_dir: Path) -> ServerState | None:
    try:
        data = json.loads((cache_dir / "server.json").read_text())
        return ServerState(
            pid=int(data["pid"]),
            port=int(data["port"]),
            model=str(data["model"]),
            n_ctx=int(data["n_ctx"]),
            logprobs=bool(data.get("logprobs", False)),
            kind=str(data.get("kind", "python")),
            slots=int(data.get("slots", 1)),
            api_key=str(data.get("api_key", "")),  # "" from a server started before keys: it takes none
        )
    except (OSError, ValueError, KeyError, TypeError):
        # Missing or from an older layout: treated as "no server recorded".
        return None


def client_key(state: ServerState | None, base_url: str) -> str:
    """The API key a client of ``base_url`` sends: the recorded server's own, else any ("embedded").

    A server this app started at ``base_url`` takes its key; one started before keys, or one you
    started yourself, takes none and accepts whatever is sent.
    """
    return state.api_key if state is not None and state.base_url == base_url and state.api_key else "embedded"


def write_state(cache_dir: Path, state: ServerState) -> None:
    temp = cache_dir / "server.json.tmp"
    temp.unlink(missing_ok=True)
    # Its owner's alone (it holds the server's key), from the moment it exists.
    with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        out.write(json.dumps(asdict(state), indent=2))
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
    """Stop a server another process started (not our child, so psutil waits for it, not ``Popen``)."""
    with suppress(psutil.NoSuchProcess):
        process = psutil.Process(pid)
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except psutil.TimeoutExpired:
            process.kill()


def _is_llama_server(pid: int, port: int) -> bool:
    """Whether ``pid`` is still the llama.cpp server on ``port`` (pids get recycled)."""
    try:
        process = psutil.Process(pid)
        arguments = process.cmdline()
        running = process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
    # ours, one an older version started, or llama.cpp's own
    server = any(name in arguments for name in SERVER_NAMES) or (bool(arguments) and Path(arguments[0]).name == NATIVE_NAME)
    return server and str(port) in arguments and running


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
