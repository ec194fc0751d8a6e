"""How fast the embedded model reads a prompt it has not seen, and writes: the rates a desk claim's time comes from.

    .venv/bin/python bench/prefill_rate.py [--repeats 3] [--words 60]

A `desk` claim is a few dozen one-token calls, so its time is almost all prompt reading:
the tokens each call does not share with the call before. This bench reads fresh prompts
(each starts with a different line, so nothing is reused) of about ``--words`` x 14 tokens

- through llama.cpp's server, as the app starts it: the server's own timings
  (``prompt_n`` tokens read in ``prompt_ms``, the prompt cache left out), with and without the
  top-10 log-probabilities the stance readings ask for, then 64 tokens written;
- through llama-cpp-python in this process (``Llama.eval`` after a reset);

and prints tokens per second for each. ``bench/embedded_speed.py``'s "prompt tokens/s" is
another figure: a whole prompt over its time to first token, shared prefix included.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings
from pipelines.core.machine import default_threads
from pipelines.run.llm.embedded.model_files import assemble_model
from pipelines.run.llm.embedded.server import client_key, ensure_server, read_state

FILLER = "Some evidence about vaccines, masks and the studies that measured them."


def prompt(run: int, words: int) -> str:
    return f"Reading {run}. " + " ".join([FILLER] * words) + "\nDoes the passage support the claim? Answer A or B."


def served(url: str, key: str, text: str, *, max_tokens: int, logprobs: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "temperature": 0}
    if logprobs:
        body |= {"logprobs": True, "top_logprobs": 10}
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return dict(json.loads(response.read()).get("timings") or {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--words", type=int, default=60, help="filler sentences a prompt holds (about 14 tokens each)")
    args = parser.parse_args()
    settings = AppSettings()
    model = assemble_model(settings.model_cache)
    threads = settings.llama_threads or default_threads()
    url = ensure_server(model, settings.model_cache, logprobs=True, n_threads=threads)
    key = client_key(read_state(settings.model_cache), url)  # the app's server answers only its own key
    print(f"model {model.name}; {threads} thread(s); server {url}")
    rows: dict[str, list[float]] = {}
    run = int(time.time())  # a first line no earlier run of this bench wrote: nothing cached
    for _ in range(args.repeats):
        for logprobs in (False, True):
            run += 1
            t = served(url, key, prompt(run, args.words), max_tokens=1, logprobs=logprobs)
            rows.setdefault(f"server: read a fresh prompt{', top-10 log-probabilities' if logprobs else ''}", []).append(
                t["prompt_n"] / (t["prompt_ms"] / 1000)
            )
        run += 1
        t = served(url, key, prompt(run, 4) + " Then explain in three long paragraphs.", max_tokens=64, logprobs=False)
        if t.get("predicted_n", 0) >= 16:  # an answer long enough to time
            rows.setdefault("server: write (up to 64 tokens)", []).append(t["predicted_n"] / (t["predicted_ms"] / 1000))

    from llama_cpp import Llama

    llama = Llama(str(model), n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False)
    for _ in range(args.repeats):
        run += 1
        tokens = llama.tokenize(prompt(run, args.words).encode())
        llama.reset()
        started = time.perf_counter()
        llama.eval(tokens)
        rows.setdefault("library: read a fresh prompt (Llama.eval)", []).append(len(tokens) / (time.perf_counter() - started))
    llama.close()

    print("\n| what | tokens/s (median) | runs |\n| --- | ---: | ---: |")
    for name, rates in rows.items():
        print(f"| {name} | {statistics.median(rates):.0f} | {len(rates)} |")


if __name__ == "__main__":
    main()
