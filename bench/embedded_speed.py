"""The embedded model's speed, side by side: the library itself, the app's Python server, llama.cpp's own server.

    nice -n 19 .venv/bin/python bench/embedded_speed.py [--threads N] [--slots 4] [--max-tokens 48] [--levels 1 2 4]

The same prompts at temperature 0 go, in one run and one after the other, through
(a) llama-cpp-python in this process (``Llama.create_chat_completion``, streamed), (b) the
app's Python server (``pipelines.run.llm.embedded.grammar_server``, as ``ensure_server`` starts
it), (c) llama.cpp's native ``llama-server`` (built by ``make model``) with parallel slots,
started with the arguments the app gives it. All three are loaded first; then each set of
calls goes through each in turn (a, b, c, then the next set), so that on a shared machine
the compared figures are taken close together. ``--levels`` sets of concurrent calls
(1: one call at a time, twice; 2 and 4: that many calls sent together; the library, which
serves one sequence, takes them one after another):

- time to first token of each call (reading its prompt, and waiting behind others);
- prompt tokens/s: the whole prompt's tokens over that time, the prefix the server kept
  from the call before included (a call that waited reads slower): how fast a prompt is
  answered, not how fast tokens are read (``bench/prefill_rate.py`` measures that);
- decode tokens/s of each call after its first token;
- the set's wall time and its total tokens/s (every call's tokens over the set's wall time).

Each call asks about a different claim after the same evidence block (evidence first, the
question last, as the calls of one claim share it), so a server that reuses a cached prefix
shows it. The last table compares the answers: at temperature 0 the three should write the
same tokens. Both servers are started on fresh ports for this run and stopped at its end
(the app's recorded server, if any, is not touched); ``--model-cache`` picks the cache
holding the model (default: the app's), ``--model`` another GGUF file (another quantisation,
say) to measure in its place. Prints ``uptime`` before and after: on a shared
machine the figures are only comparable within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai import OpenAI

from bench.embedded_model import CLAIMS as MODEL_BENCH_CLAIMS
from pipelines.core.config import AppSettings
from pipelines.run.llm.embedded import assemble_model, default_threads
from pipelines.run.llm.embedded import server as embedded_server

SYSTEM = "You check claims against evidence. Reason briefly, cite evidence as [E1], end with 'Label: X'."
EVIDENCE = (
    "Evidence:\n"
    "[E1] Randomized trials of community mask wearing found modest reductions in symptomatic infections.\n"
    "[E2] Laboratory studies show that surgical masks block most large respiratory droplets.\n"
    "[E3] Observational data from households suggest masks lower secondary attack rates.\n"
    "[E4] A cluster trial in Bangladesh reported an 11% relative reduction in symptomatic seroprevalence with surgical masks.\n"
    "[E5] Cloth masks filtered fewer particles than surgical masks in laboratory tests.\n"
)
CLAIMS = (
    *MODEL_BENCH_CLAIMS,  # the claims bench/embedded_model.py times, in the same order, then three more
    "Surgical masks filter more particles than cloth masks.",
    "Masks cause dangerous oxygen deprivation.",
    "Hand washing alone stops the spread of influenza.",
)


def messages_for(claim: str) -> list[dict[str, str]]:
    question = f"Claim: {claim}\nIs the claim supported, refuted, or is there not enough information?"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{EVIDENCE}\n{question}"}]


@dataclass
class Call:
    claim: str
    ttft: float
    tokens: int
    decode_s: float
    text: str
    prompt_tokens: int = 0

    @property
    def decode_rate(self) -> float:
        return (self.tokens - 1) / self.decode_s if self.tokens > 1 and self.decode_s > 0 else float("nan")

    @property
    def prompt_rate(self) -> float:
        return self.prompt_tokens / self.ttft if self.ttft > 0 and self.prompt_tokens else float("nan")


def timed(stream: Iterator[str], claim: str) -> Call:
    """Consume a stream of text pieces (one token each), timing the first and the rest."""
    started = time.perf_counter()
    first = None
    pieces: list[str] = []
    for piece in stream:
        if piece:
            first = first or time.perf_counter()
            pieces.append(piece)
    end = time.perf_counter()
    first = first or end
    return Call(claim, ttft=first - started, tokens=len(pieces), decode_s=end - first, text="".join(pieces))


class Library:
    """(a) llama-cpp-python in this process: one sequence at a time."""

    name = "a) llama-cpp-python directly"
    concurrent = False

    def __init__(self, model: Path, threads: int, n_ctx: int, *, fresh: bool = False) -> None:
        from llama_cpp import Llama

        self.llama = Llama(str(model), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
        self.fresh = fresh  # read every prompt from its first token (no prefix kept from the call before)
        self._lock = threading.Lock()

    def call(self, claim: str, max_tokens: int) -> Call:
        with self._lock:
            if self.fresh:
                self.llama.reset()
            chunks = self.llama.create_chat_completion(messages_for(claim), max_tokens=max_tokens, temperature=0, stream=True)  # type: ignore[arg-type]
            call = timed((c["choices"][0]["delta"].get("content") or "" for c in chunks), claim)  # type: ignore[index, union-attr]
            usage = self.llama.create_chat_completion(messages_for(claim), max_tokens=1, temperature=0)["usage"]  # type: ignore[index, arg-type]
            call.prompt_tokens = int(usage["prompt_tokens"])
        return call

    def close(self) -> None:
        self.llama.close()


class Served:
    """(b) or (c): a server process on loopback, called with the OpenAI client from several threads."""

    concurrent = True

    def __init__(self, name: str, command: list[str], port: int, alias: str, log: Path) -> None:
        self.name = name
        self.alias = alias
        root = str(Path(__file__).resolve().parents[1])
        env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))}
        self._log = log.open("ab")
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + embedded_server.STARTUP_TIMEOUT_S
        while not embedded_server._answers(port, alias):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise SystemExit(f"{name} did not start; see {log}")
            time.sleep(0.5)
        self.client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=900)

    def call(self, claim: str, max_tokens: int) -> Call:
        stream = self.client.chat.completions.create(
            model=self.alias,
            messages=messages_for(claim),
            max_tokens=max_tokens,
            temperature=0,
            stream=True,  # type: ignore[arg-type]
        )
        call = timed((c.choices[0].delta.content or "" for c in stream if c.choices), claim)
        # The prompt's size: the Python server's stream carries no usage, so ask once more for one token (its prefix is cached).
        answer = self.client.chat.completions.create(model=self.alias, messages=messages_for(claim), max_tokens=1, temperature=0)  # type: ignore[arg-type]
        call.prompt_tokens = answer.usage.prompt_tokens if answer.usage else 0
        return call

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def run_level(backend: Any, claims: list[str], concurrent: int, max_tokens: int) -> tuple[list[Call], float]:
    """``concurrent`` calls sent together (or one after another for the library); their results and the set's wall time."""
    if backend.concurrent and concurrent > 1:
        with ThreadPoolExecutor(concurrent) as pool:
            calls = list(pool.map(lambda claim: backend.call(claim, max_tokens), claims))
    else:
        calls = [backend.call(claim, max_tokens) for claim in claims]
    # The set's wall time ends with its last token; the one-token usage calls after each are not counted.
    wall = max(c.ttft + c.decode_s for c in calls) if backend.concurrent and concurrent > 1 else sum(c.ttft + c.decode_s for c in calls)
    return calls, wall


def uptime() -> str:
    load = os.getloadavg()
    return f"{time.strftime('%H:%M:%S', time.gmtime())} UTC, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="threads of each (0: the app's default)")
    parser.add_argument("--slots", type=int, default=4, help="the native server's parallel slots (0: the app's default, 1 on 2 threads)")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--only", default="abc", help="which of a, b, c to run")
    parser.add_argument("--model-cache", type=Path, default=None)
    parser.add_argument("--model", type=Path, default=None, help="another GGUF file to measure instead of the shipped model")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a stopped run still stops the servers it started (finally below)

    settings = AppSettings()
    cache = args.model_cache or settings.model_cache
    model = args.model.resolve() if args.model else assemble_model(cache)
    threads = args.threads or settings.llama_threads or default_threads()
    slots = args.slots or embedded_server.default_slots(threads)
    n_ctx = embedded_server.DEFAULT_N_CTX
    log = cache / "bench-embedded-speed.log"
    print(f"model {model.name}; {threads} thread(s) each; native server with {slots} slots; {args.max_tokens} tokens an answer")
    print(f"before: {uptime()}", flush=True)

    # The claims of each set: level 1 runs twice, one call at a time; every call of the run has its own claim.
    plan: list[tuple[int, list[str]]] = []
    next_claim = 0
    for level in args.levels:
        count = 2 if level == 1 else level
        plan.append((level, [CLAIMS[(next_claim + i) % len(CLAIMS)] for i in range(count)]))
        next_claim += count

    factories: dict[str, Callable[[], Any]] = {
        "a": lambda: Library(model, threads, n_ctx),
        "b": lambda: _start(
            "b) the app's Python server (grammar_server)", embedded_server.python_server_command, model, n_ctx, threads, 1, log
        ),
        "c": lambda: _start(
            f"c) llama.cpp's llama-server, {slots} slots", embedded_server.native_server_command, model, n_ctx, threads, slots, log
        ),
    }
    backends: list[Any] = []
    results: dict[str, dict[int, tuple[list[Call], float, str]]] = {}
    try:
        # All loaded first (an idle one takes no CPU), then each set of calls through each in turn:
        # on a shared machine the load drifts, so the compared figures are taken minutes apart at most.
        for key in args.only:
            if key == "c" and embedded_server.native_server_binary() is None:
                print("c) skipped: no llama-server binary (build it with `make model`)")
                continue
            backend = factories[key]()
            backends.append(backend)
            backend.call("Warm-up: say OK.", 2)  # the model's load and first allocation are not measured
            results[backend.name] = {}
        for level, claims in plan:
            for backend in backends:
                calls, wall = run_level(backend, claims, level, args.max_tokens)
                results[backend.name][level] = (calls, wall, uptime())
                print(f"  {backend.name}: {level} concurrent done in {wall:.1f} s ({uptime()})", flush=True)
    finally:
        for backend in backends:
            backend.close()
    print(f"after: {uptime()}\n")
    print_tables(results, plan)


def _start(name: str, command_for: Callable[..., list[str]], model: Path, n_ctx: int, threads: int, slots: int, log: Path) -> Served:
    port = embedded_server._free_port()
    command = command_for(model, port, n_ctx=n_ctx, threads=threads, slots=slots, logprobs=False)
    return Served(name, command, port, model.stem, log)


def print_tables(results: dict[str, dict[int, tuple[list[Call], float, str]]], plan: list[tuple[int, list[str]]]) -> None:
    print(
        "| backend | calls together | time to first token (s, median) | prompt tokens/s (median) | decode tokens/s per call (median) | set's wall (s) | total tokens/s | load at end |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, levels in results.items():
        for level, (calls, wall, load) in levels.items():
            total = sum(c.tokens for c in calls)
            print(
                f"| {name} | {level} | {statistics.median(c.ttft for c in calls):.2f} | {statistics.median(c.prompt_rate for c in calls):.0f} "
                f"| {statistics.median(c.decode_rate for c in calls):.1f} | {wall:.1f} | {total / wall:.1f} | {load.split('average ')[-1]} |"
            )
    names = list(results)
    if len(names) < 2:
        return
    print("\nSame answers at temperature 0 (each claim against the first backend's answer to it):")
    reference = {c.claim: c.text for calls, _, _ in results[names[0]].values() for c in calls}
    for name in names[1:]:
        same = differ = 0
        for calls, _, _ in results[name].values():
            for c in calls:
                if reference.get(c.claim) == c.text:
                    same += 1
                else:
                    differ += 1
                    print(f"  {name} differs on {c.claim!r}:\n    {json.dumps(reference.get(c.claim))}\n    {json.dumps(c.text)}")
        print(f"- {name}: {same} identical, {differ} different")


if __name__ == "__main__":
    main()
