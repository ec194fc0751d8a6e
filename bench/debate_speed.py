"""Whole debates on the embedded model: each claim's wall time against the model's own work for its tokens, and where the rest goes.

    .venv/bin/python bench/debate_speed.py [--protocols toolmad single] [--check-covid-claims 3] [--data-dir DIR]
        [--records FILE.jsonl] [--rate-calls 3]
    .venv/bin/python bench/debate_speed.py --backend fake --prompt-rate 150 --decode-rate 30   # the smoke test's way

The demo set (``bench/record_embedded.py``'s: the demo corpus's claim and the first N
Check-COVID dev claims) goes through each protocol the way the app runs it (Services +
stream_run on the app's default embedded server, run store on, web search off, response
cache off so every call reaches the model). Around the debates, in the same run, the
library itself (llama-cpp-python in this process, ``bench/embedded_speed.py``'s ``Library``,
the same thread count, every prompt read from its first token) sets the model's rates:
prompt tokens/s (a prompt's tokens over its time to first token) and decode tokens/s.
Per claim, then as medians:

- wall seconds, model calls, prompt and completion tokens (the calls' usage);
- the model's own work: prompt tokens / prompt rate + completion tokens / decode rate,
  and the ratio wall / own work (issue 18's target: at most 1.3 for ``toolmad``);
- where the wall time goes: time with at least one call in flight ("in calls") and with
  none ("outside calls": retrieval, MiniLM, the store, the app's own work), the sum of the
  calls' times beyond that (calls waiting on each other), the server's own compute for the
  claim (from llama-server's log: prompt tokens it actually read after its prompt cache,
  decoded tokens, and their milliseconds), and the outside-calls time by the stage that was
  open (or the event that came last when none was: ``after QueryIssued`` is a search);
- the reading-rate share (issue 50 part 3): the library's own time for what the server
  actually computed (its prompt tokens read after the cache at the library's prompt rate, its
  decoded tokens at its decode rate) over the time the claim had a call in flight. 1.0 is the
  library's rate; below it is each call's overhead (HTTP, the chat template, the server's
  scheduling, the app's own work between a call's start and its first token).

The server is started (or reused) by the app's own code with the app's defaults; stop it
afterwards with ``.venv/bin/python -m pipelines model stop`` (same ``DEBATEDESK_MODEL_CACHE``).
Prints ``uptime`` load averages with every claim: on a shared machine the figures are only
comparable within one run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.embedded_speed import CLAIMS as RATE_CLAIMS
from bench.embedded_speed import Library, uptime
from bench.record_embedded import DEMO_CLAIMS, check_covid_claims
from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import Event, ModelCallCompleted, StageCompleted, StageStarted
from pipelines.record.digest import call_stage, digest, stage_name
from pipelines.record.timeline import peak_in_flight, union_length
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.stages.exhibit_reading import NOT_DEBATED

# Verdicts recorded earlier for the demo set at temperature 0, and where (the server, prompts and code of their day).
RECORDED: dict[tuple[str, str], tuple[str, str]] = {
    ("toolmad", "demo-masks"): ("REFUTES", "2026-11-22-embedded-model (bench/llama_threads.py, Python server, 2 threads)"),
    ("toolmad", "60ac5f7ff9b9e03ea4d8e68e_0"): ("NOT ENOUGH INFO", "2026-11-22-embedded-toolmad-runs (Python server, 1 thread)"),
    ("toolmad", "60ac5f7ff9b9e03ea4d8e68e_1"): ("NOT ENOUGH INFO", "2026-11-22-embedded-toolmad-runs (Python server, 1 thread)"),
    ("toolmad", "60ac5f7ff9b9e03ea4d8e68e_2"): ("NOT ENOUGH INFO", "2026-11-22-embedded-toolmad-runs (replayed from _0's cache)"),
    ("single", "demo-masks"): ("SUPPORTS", "2026-11-22-embedded-model (bench/llama_threads.py, Python server, 2 threads)"),
    ("single", "60ac5f7ff9b9e03ea4d8e68e_0"): ("SUPPORTS", "2026-11-23-desk (bench/desk.py, Python server)"),
    ("single", "60ac5f7ff9b9e03ea4d8e68e_1"): ("SUPPORTS", "2026-11-23-desk (bench/desk.py, Python server)"),
    ("single", "60ac5f7ff9b9e03ea4d8e68e_2"): ("SUPPORTS", "2026-11-23-desk (replayed from _0's cache)"),
}

_TIMING = re.compile(r"\|\s*task (\d+) \|\s*(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) tokens")


@dataclass(frozen=True)
class Rates:
    """The model's own speed: prompt tokens/s (read afresh) and decode tokens/s."""

    prompt: float
    decode: float
    source: str

    def own_work(self, tokens_in: int, tokens_out: int) -> float:
        return tokens_in / self.prompt + tokens_out / self.decode


@dataclass(frozen=True)
class ServerWork:
    """What llama-server's log says it computed: prompt tokens read (after its cache) and decoded, with their time."""

    tasks: int = 0
    prompt_tokens: int = 0
    prompt_s: float = 0.0
    decoded_tokens: int = 0
    decode_s: float = 0.0

    @property
    def seconds(self) -> float:
        return self.prompt_s + self.decode_s


def server_work(log_text: str) -> ServerWork:
    """Sum llama-server's per-task ``print_timing`` lines (prompt eval and eval) in a piece of its log."""
    seen: dict[tuple[str, str], tuple[float, int]] = {}
    for task, kind, ms, tokens in _TIMING.findall(log_text):
        seen[(task, kind)] = (float(ms) / 1000, int(tokens))
    prompt = [v for (_, kind), v in seen.items() if kind == "prompt eval"]
    decode = [v for (_, kind), v in seen.items() if kind == "eval"]
    return ServerWork(
        tasks=len({task for task, _ in seen}),
        prompt_tokens=sum(n for _, n in prompt),
        prompt_s=sum(s for s, _ in prompt),
        decoded_tokens=sum(n for _, n in decode),
        decode_s=sum(s for s, _ in decode),
    )


def outside_calls(events: Sequence[Event]) -> dict[str, float]:
    """The time with no model call in flight, by the innermost open stages then (or the last event's type when none is open)."""
    spans = [(e.at - e.seconds, e.at) for e in events if isinstance(e, ModelCallCompleted) and not e.cached]
    marks = sorted({e.at for e in events} | {start for start, _ in spans})
    ordered = sorted(events, key=lambda e: e.at)
    where: dict[str, float] = {}
    open_stages: list[str] = []
    last = ""
    i = 0
    for start, stop in itertools.pairwise(marks):
        while i < len(ordered) and ordered[i].at <= start:
            evt = ordered[i]
            if isinstance(evt, StageStarted):
                open_stages.append(stage_name(evt.stage))
            elif isinstance(evt, StageCompleted) and stage_name(evt.stage) in open_stages:
                del open_stages[len(open_stages) - 1 - open_stages[::-1].index(stage_name(evt.stage))]
            last = type(evt).__name__
            i += 1
        middle = (start + stop) / 2
        if any(s <= middle <= e for s, e in spans):
            continue
        label = call_stage(open_stages, "") if open_stages else f"no stage open, after {last}"
        where[label] = where.get(label, 0.0) + stop - start
    return where


@dataclass
class ClaimResult:
    protocol: str
    corpus: str
    claim_id: str
    claim: str
    verdict: str
    recorded: str
    recorded_in: str
    wall_s: float
    calls: int
    cached_calls: int
    tokens_in: int
    tokens_out: int
    own_work_s: float
    ratio: float
    in_calls_s: float
    outside_calls_s: float
    calls_sum_s: float
    waiting_s: float  # the calls' summed time beyond the time with a call in flight: calls waiting on each other
    peak_in_flight: int
    app_cpu_s: float = 0.0  # this process's CPU time (all its threads) during the claim: what it took from the server's cores
    server: dict[str, float | int] = field(default_factory=dict)
    reading_share: float = float("nan")  # the library's time for the server's work / the time with a call in flight
    outside_by_stage: dict[str, float] = field(default_factory=dict)
    load: str = ""
    confidence: float | None = None
    debate_when: str = "always"  # belief.debate_when the claim ran with
    decided_by: str = ""  # who ruled: a debate's judge or panel, the calibrated reading, or desk's exhibits with no debate run


def measure(
    events: list[Event], wall: float, rates: Rates, *, protocol: str, corpus: str, claim_id: str, claim: str, server: ServerWork | None
) -> ClaimResult:
    run = digest(events)
    cost = run.cost
    live = [c for c in run.calls if not c.cached]
    spans = [(c.at - c.seconds, c.at) for c in live]
    in_calls = union_length(spans)
    calls_sum = sum(c.seconds for c in live)
    own = rates.own_work(cost.tokens_in, cost.tokens_out)
    recorded, where = RECORDED.get((protocol, claim_id), ("", ""))
    return ClaimResult(
        protocol=protocol,
        corpus=corpus,
        claim_id=claim_id,
        claim=claim,
        verdict=run.outcome,
        confidence=run.verdict.confidence if run.verdict is not None else None,
        decided_by=run.verdict.decided_by if run.verdict is not None else "",
        recorded=recorded,
        recorded_in=where,
        wall_s=wall,
        calls=cost.calls,
        cached_calls=cost.cached_calls,
        tokens_in=cost.tokens_in,
        tokens_out=cost.tokens_out,
        own_work_s=own,
        ratio=wall / own if own else float("nan"),
        in_calls_s=in_calls,
        outside_calls_s=max(0.0, wall - in_calls),
        calls_sum_s=calls_sum,
        waiting_s=calls_sum - in_calls,
        peak_in_flight=peak_in_flight(spans),
        server={k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(server).items()} if server else {},
        reading_share=rates.own_work(server.prompt_tokens, server.decoded_tokens) / in_calls if server and in_calls else float("nan"),
        outside_by_stage={k: round(v, 2) for k, v in sorted(outside_calls(events).items(), key=lambda kv: -kv[1])},
        load=uptime(),
    )


def library_rates(settings: AppSettings, calls: int, max_tokens: int) -> Rates:
    """Prompt and decode tokens/s of llama-cpp-python itself, every prompt read afresh, on the app server's thread count."""
    from pipelines.run.llm.embedded import assemble_model, default_threads
    from pipelines.run.llm.embedded.server import DEFAULT_N_CTX

    threads = settings.llama_threads or default_threads()
    library = Library(assemble_model(settings.model_cache), threads, DEFAULT_N_CTX, fresh=True)
    try:
        library.call("Warm-up: say OK.", 2)
        measured = [library.call(RATE_CLAIMS[i % len(RATE_CLAIMS)], max_tokens) for i in range(calls)]
    finally:
        library.close()
    prompt = statistics.median(c.prompt_rate for c in measured)
    decode = statistics.median(c.decode_rate for c in measured)
    detail = ", ".join(f"{c.prompt_tokens} tok in {c.ttft:.2f} s, {c.tokens} out at {c.decode_rate:.1f}/s" for c in measured)
    return Rates(prompt, decode, f"llama-cpp-python, {threads} thread(s), {calls} calls read afresh ({detail}); {uptime()}")


def debate_config(protocol: str, corpus: str, backend: str, debate_when: str = "always") -> RunConfig:
    """The app's defaults for ``protocol``, except web search off, the response cache off (every call reaches the model) and
    ``belief.debate_when`` (always: the whole debate, which the app's default skips where it could not change the verdict)."""
    config = RunConfig(protocol=protocol, corpus=corpus).with_backend(backend)
    return config.model_copy(
        update={
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            "belief": config.belief.model_copy(update={"debate_when": debate_when}),
            **{role: config.role(role).model_copy(update={"cache": "off"}) for role in ("debater", "judge", "scorer")},
        }
    )


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_log(settings: AppSettings) -> Path:
    return settings.model_cache / "server.log"


def run_set(
    services: Services,
    settings: AppSettings,
    claims: list[tuple[str, str, str, str]],
    protocols: list[str],
    backend: str,
    rates: Rates,
    records: Path | None,
    debate_when: str = "always",
) -> list[ClaimResult]:
    results: list[ClaimResult] = []
    for protocol in protocols:
        for corpus, claim_id, claim, _gold in claims:
            services.ensure_corpus(corpus)
            log = server_log(settings)
            offset = log.stat().st_size if backend == "embedded" and log.is_file() else None
            cpu_before = _cpu_seconds()
            started = time.perf_counter()
            events = list(stream_run(claim, debate_config(protocol, corpus, backend, debate_when), services))
            wall = time.perf_counter() - started
            cpu = _cpu_seconds() - cpu_before
            work = None
            if offset is not None:
                with log.open("rb") as f:
                    f.seek(offset)
                    work = server_work(f.read().decode(errors="replace"))
            result = measure(events, wall, rates, protocol=protocol, corpus=corpus, claim_id=claim_id, claim=claim, server=work)
            result.app_cpu_s = cpu
            result.debate_when = debate_when
            results.append(result)
            print(
                f"  {protocol} {claim_id}: {result.verdict} in {result.wall_s:.1f} s, {result.calls} calls, "
                f"own work {result.own_work_s:.1f} s, ratio {result.ratio:.2f} ({result.load})",
                flush=True,
            )
            if records is not None:
                with records.open("a") as out:
                    out.write(json.dumps(asdict(result)) + "\n")
    return results


def warm_up(services: Services, backend: str) -> None:
    """The server's start and the model's load are not a debate's time: one short call first."""
    from langchain_core.messages import HumanMessage

    chat = services.chat_model(debate_config("single", "demo", backend).role("debater"))
    chat.invoke([HumanMessage("Say OK.")], max_tokens=2)


def report(results: list[ClaimResult], rates: Rates) -> str:
    """The tables for a measurement page: per claim, then the medians per protocol."""
    lines = [
        f"Rates: prompt {rates.prompt:.0f} tokens/s, decode {rates.decode:.1f} tokens/s ({rates.source})",
        "",
        "| protocol | claim | verdict | recorded earlier | wall (s) | calls | tokens in / out | own work (s) | wall / own work "
        "| in calls (s) | outside calls (s) | calls waiting (s; most in flight) | server: prompt read (tokens, s, tokens/s) | server: decoded (tokens, s, tokens/s) | in calls, server not computing (s) | reading-rate share | app's CPU (s) | load |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        s = r.server
        read = f"{s['prompt_tokens']:,}, {s['prompt_s']:.1f}, {_rate(s['prompt_tokens'], s['prompt_s'])}" if s else "n/a"
        decoded = f"{s['decoded_tokens']:,}, {s['decode_s']:.1f}, {_rate(s['decoded_tokens'], s['decode_s'])}" if s else "n/a"
        idle = f"{r.in_calls_s - s['prompt_s'] - s['decode_s']:.1f}" if s else "n/a"
        same = "" if not r.recorded else (" (same)" if r.recorded == r.verdict else " (**differs**)")
        lines.append(
            f"| {r.protocol}{'' if r.debate_when == 'always' else ' (contested)'} | {r.claim_id} | {r.verdict} | {r.recorded or '–'}{same} | {r.wall_s:.1f} | {r.calls} | {r.tokens_in:,} / {r.tokens_out:,} "
            f"| {r.own_work_s:.1f} | {r.ratio:.2f} | {r.in_calls_s:.1f} | {r.outside_calls_s:.1f} | {r.waiting_s:.1f}; {r.peak_in_flight} | {read} | {decoded} | {idle} | {r.reading_share:.2f} | {r.app_cpu_s:.1f} "
            f"| {r.load.split('average ')[-1]} |"
        )
    lines += [
        "",
        "| protocol | claims | median wall (s) | median own work (s) | median wall / own work | median outside calls (s) | median reading-rate share |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for protocol in dict.fromkeys(r.protocol for r in results):
        rows = [r for r in results if r.protocol == protocol]
        lines.append(
            f"| {protocol} | {len(rows)} | {statistics.median(r.wall_s for r in rows):.1f} | {statistics.median(r.own_work_s for r in rows):.1f} "
            f"| {statistics.median(r.ratio for r in rows):.2f} | {statistics.median(r.outside_calls_s for r in rows):.1f} "
            f"| {statistics.median(r.reading_share for r in rows):.2f} |"
        )
    lines += ["", "Outside calls, by stage (seconds, each claim's largest five):"]
    for r in results:
        top = "; ".join(f"{k} {v:.1f}" for k, v in list(r.outside_by_stage.items())[:5])
        lines.append(f"- {r.protocol} {r.claim_id}: {top}")
    return "\n".join(lines)


def _rate(tokens: float, seconds: float) -> str:
    return f"{tokens / seconds:.1f}" if seconds else "–"


def main(argv: Sequence[str] | None = None) -> list[ClaimResult]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--protocols", nargs="+", default=["toolmad", "single"])
    parser.add_argument("--set", choices=["demo", "check-covid", "both"], default="both", help="which of the demo set's claims")
    parser.add_argument("--check-covid-claims", type=int, default=3)
    parser.add_argument("--backend", default="embedded", help="embedded (the measurement) or fake (the smoke test)")
    parser.add_argument("--data-dir", type=Path, default=None, help="the data folder (index, run store); default: the app's")
    parser.add_argument("--records", type=Path, default=None, help="append one JSON line per claim here")
    parser.add_argument("--rate-calls", type=int, default=3, help="library calls timed before and after the debates")
    parser.add_argument("--rate-tokens", type=int, default=96, help="tokens each library call decodes")
    parser.add_argument("--prompt-rate", type=float, default=0.0, help="use this prompt tokens/s instead of timing the library")
    parser.add_argument("--decode-rate", type=float, default=0.0, help="use this decode tokens/s instead of timing the library")
    parser.add_argument(
        "--debate-when",
        nargs="+",
        choices=["always", "contested"],
        default=["always"],
        help="belief.debate_when, one pass over the claims each (always: whole debates; contested: the app's default); both: a paired table",
    )
    args = parser.parse_args(argv)

    settings = AppSettings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    claims = (DEMO_CLAIMS if args.set in ("demo", "both") else []) + (
        check_covid_claims(settings.checkcovid_dir, args.check_covid_claims) if args.set in ("check-covid", "both") else []
    )
    print(f"{len(claims)} claim(s) x {', '.join(args.protocols)} on the {args.backend} backend; before: {uptime()}", flush=True)
    given = args.prompt_rate > 0 and args.decode_rate > 0
    before = Rates(args.prompt_rate, args.decode_rate, "given on the command line") if given else None
    if before is None:
        before = library_rates(settings, args.rate_calls, args.rate_tokens)
        print(f"library before: prompt {before.prompt:.0f} tokens/s, decode {before.decode:.1f} tokens/s ({before.source})", flush=True)
    services = Services.create(settings)
    warm_up(services, args.backend)
    results = []
    for mode in args.debate_when:  # one whole pass each: the server's prompt cache holds about one claim, so passes do not share it
        results += run_set(services, settings, claims, args.protocols, args.backend, before, args.records, debate_when=mode)
    rates = before
    if not given:
        after = library_rates(settings, args.rate_calls, args.rate_tokens)
        print(f"library after: prompt {after.prompt:.0f} tokens/s, decode {after.decode:.1f} tokens/s ({after.source})", flush=True)
        # The rates the ratios use: the mean of before and after (the machine drifts even when quiet).
        rates = Rates(
            (before.prompt + after.prompt) / 2,
            (before.decode + after.decode) / 2,
            f"mean of before ({before.prompt:.0f}, {before.decode:.1f}) and after ({after.prompt:.0f}, {after.decode:.1f})",
        )
        results = [measure_again(r, rates) for r in results]  # own work and ratio with the bracketing rates; the rest as measured
    print(f"after: {uptime()}; server pid file: {os.fspath(settings.model_cache / 'server.json')}\n")
    print(report(results, rates))
    if len(args.debate_when) > 1:
        print("\n" + paired(results))
    return results


def fresh_tokens(result: ClaimResult) -> int:
    """The prompt tokens the model computed for the claim: the server's count after its prompt cache, else every prompt token sent."""
    return int(result.server["prompt_tokens"]) if result.server else result.tokens_in


def _close(a: float | None, b: float | None) -> bool:
    """Confidences equal but for the server's run-to-run noise in token probabilities (seen: 0.9031 and 0.9037, one reading)."""
    return a == b if a is None or b is None else abs(a - b) <= 0.005


def paired(results: list[ClaimResult]) -> str:
    """Each protocol's claims run with belief.debate_when always and contested, side by side: the model's fresh prompt tokens,
    calls and wall time (medians), and whether each claim's verdict is the same (label and confidence)."""
    lines = [
        "| protocol | claims | debated (contested) | fresh prompt tokens, always / contested (median) | ratio | calls, always / contested "
        "| wall s, always / contested | same label | same label and confidence (within 0.005) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for protocol in dict.fromkeys(r.protocol for r in results):
        always = {r.claim_id: r for r in results if r.protocol == protocol and r.debate_when == "always"}
        contested = {r.claim_id: r for r in results if r.protocol == protocol and r.debate_when == "contested"}
        both = [c for c in always if c in contested]
        if not both:
            continue
        a = [always[c] for c in both]
        b = [contested[c] for c in both]
        fa, fb = statistics.median(fresh_tokens(r) for r in a), statistics.median(fresh_tokens(r) for r in b)
        debated = sum(1 for r in b if r.decided_by not in NOT_DEBATED)
        label = sum(x.verdict == y.verdict for x, y in zip(a, b, strict=True))
        same = sum(x.verdict == y.verdict and _close(x.confidence, y.confidence) for x, y in zip(a, b, strict=True))
        lines.append(
            f"| {protocol} | {len(both)} | {debated} | {fa:,.0f} / {fb:,.0f} | {fb / fa if fa else float('nan'):.2f} "
            f"| {statistics.median(r.calls for r in a):.0f} / {statistics.median(r.calls for r in b):.0f} "
            f"| {statistics.median(r.wall_s for r in a):.1f} / {statistics.median(r.wall_s for r in b):.1f} | {label} of {len(both)} | {same} of {len(both)} |"
        )
    return "\n".join(lines)


def measure_again(result: ClaimResult, rates: Rates) -> ClaimResult:
    """The figures that rest on the library's rates, with ``rates`` (the bracketing ones): own work, its ratio, the reading-rate share."""
    own = rates.own_work(result.tokens_in, result.tokens_out)
    result.own_work_s = own
    result.ratio = result.wall_s / own if own else float("nan")
    if result.server and result.in_calls_s:
        served = rates.own_work(int(result.server["prompt_tokens"]), int(result.server["decoded_tokens"]))
        result.reading_share = served / result.in_calls_s
    return result


if __name__ == "__main__":
    main()
