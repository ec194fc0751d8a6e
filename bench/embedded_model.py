"""The embedded model on this machine: time to first token and tokens per second, streamed.

    .venv/bin/python bench/embedded_model.py [--runs 3] [--max-tokens 64] [--base-url URL]

Starts (or reuses) the llama.cpp server the app uses, then streams a few short answers
(a ~150-token fact-checking prompt, a different claim each time so the server's prompt
cache does not flatter the first token). Time to first token covers reading the prompt;
tokens per second is the decoding rate after it (llama.cpp streams one token a chunk).
``--base-url`` times a llama.cpp server you started yourself instead (say, one with more
threads: ``python -m llama_cpp.server --model M --n_threads 2 --port 8799`` and
``--base-url http://127.0.0.1:8799/v1``). Kept short: the machine is shared. Stop the server afterwards with
``.venv/bin/python -m pipelines model stop`` if nothing else uses it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai import OpenAI

from pipelines.core.config import AppSettings
from pipelines.run.llm.embedded import assemble_model, default_threads, ensure_server
from pipelines.run.llm.embedded.server import client_key, read_state

CLAIMS = (
    "Masks reduce transmission of respiratory viruses.",
    "COVID-19 vaccines alter human DNA.",
    "Children have the highest COVID-19 mortality rate.",
    "Vitamin D supplements prevent COVID-19 infection.",
    "SARS-CoV-2 can survive on cardboard for up to 24 hours.",
)
EVIDENCE = (
    "[E1] Randomized trials of community mask wearing found modest reductions in symptomatic infections. "
    "[E2] Laboratory studies show that surgical masks block most large respiratory droplets. "
    "[E3] Observational data from households suggest masks lower secondary attack rates."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--base-url", default="", help="time this already running llama.cpp server instead of the app's")
    args = parser.parse_args()

    if args.base_url:
        base_url, model_name = args.base_url, "local"  # a one-model server answers whatever the name
        print(f"timing the server at {base_url}")
    else:
        settings = AppSettings()
        model = assemble_model(settings.model_cache)
        started = time.perf_counter()
        base_url = ensure_server(model, settings.model_cache, n_threads=settings.llama_threads or None)
        threads = settings.llama_threads or default_threads()
        print(
            f"server ready in {time.perf_counter() - started:.1f} s at {base_url} ({threads} thread(s) if it started now); model {model.name}"
        )
        model_name = model.stem
    state = None if args.base_url else read_state(settings.model_cache)
    client = OpenAI(base_url=base_url, api_key=client_key(state, base_url), timeout=600)
    ttfts, rates = [], []
    for i in range(args.runs):
        claim = CLAIMS[i % len(CLAIMS)]
        messages = [
            {"role": "system", "content": "You check claims against evidence. Reason briefly, cite evidence as [E1], end with 'Label: X'."},
            {
                "role": "user",
                "content": f"Claim: {claim}\nEvidence:\n{EVIDENCE}\nIs the claim supported, refuted, or is there not enough information?",
            },
        ]
        t0 = time.perf_counter()
        first = None
        tokens = 0
        stream = client.chat.completions.create(model=model_name, messages=messages, max_tokens=args.max_tokens, temperature=0, stream=True)  # type: ignore[arg-type]
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                first = first or time.perf_counter()
                tokens += 1
        end = time.perf_counter()
        if first is None:
            print(f"run {i + 1}: no tokens")
            continue
        ttft, rate = first - t0, (tokens - 1) / (end - first) if tokens > 1 and end > first else float("nan")
        ttfts.append(ttft)
        rates.append(rate)
        print(f"run {i + 1}: time to first token {ttft:.2f} s; {tokens} tokens; {rate:.1f} tokens/s after the first")
    if ttfts:
        print(f"median: time to first token {statistics.median(ttfts):.2f} s, {statistics.median(rates):.1f} tokens/s ({len(ttfts)} runs)")


if __name__ == "__main__":
    main()
