"""Ingestion speed, side by side: `pipelines ingest` (process start included) against MiniLM on torch encoding the same texts.

    nice -n 19 .venv/bin/python bench/ingest_speed.py [--passages 2000] [--reps 2] [--runtimes onnx,onnx:float32,torch]
        [--checkcovid-dir DIR]

Writes Check-COVID passages (3 sentences each, cycled with a copy number once the 1,649 run
out) to a JSON-lines file, one a line with its title, so the app's loader and chunker make one
passage of most lines (a few lines whose sentences the chunker splits otherwise make two; lines
are taken until ``--passages`` passages). The texts torch encodes are the ones the ingestion
embeds: the app's own chunking of that file, each passage's title first. Then, per repetition
and in turn:

- torch batched: sentence-transformers on torch encodes those texts in this process, in
  batches of 64 (the model already loaded: the encoder's own rate, the issue's yardstick);
- ``python -m pipelines ingest FILE --corpus bench`` into a fresh data folder, once per
  ``--runtimes`` entry (``DEBATEDESK_EMBEDDINGS``, and after a colon ``DEBATEDESK_PASSAGE_PRECISION``: ``onnx`` is
  the app's default, passages on int8 weights; ``onnx:float32`` the float weights, as before 2026-12-02): wall time of
  the whole process (interpreter start, imports, model load, chunking, embedding, Chroma, BM25).

Prints each figure with the load average when it was taken, then the medians and the ratio of
each ingest to the torch-batched rate. The ONNX export in the model cache, and its int8 copy, are made before the
first timing (made once per machine, not per ingestion).

Until 2026-11-24 the file held each passage's title and text as one untitled text, which the
chunker cut into about 1.9 passages a line (3,805 for 2,000 lines, overlapping by a sentence,
each prefixed with the file's name): the ingestion embedded about twice the texts torch did.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader, FileLoader
from pipelines.core.config import AppSettings
from pipelines.run.tools.embeddings import MiniLMEmbedder, int8_model, onnx_model

ROOT = Path(__file__).resolve().parents[1]


def passage_file(folder: Path, count: int, path: Path) -> list[str]:
    """Write lines of Check-COVID passages to ``path`` until the app makes ``count`` passages of them; their texts as it embeds them."""
    source = list(chunk_documents(CheckCovidLoader(folder).load_documents()))
    lines: list[str] = []
    texts: list[str] = []
    number = 0
    while len(texts) < count:
        p = source[number % len(source)]
        copy = number // len(source)
        row = {"id": f"p{number}", "title": p.title, "text": f"(copy {copy}) {p.text}" if copy else p.text}
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        made = [q.indexed_text for q in chunk_documents(FileLoader([path]).load_documents())]
        lines.append(json.dumps(row))
        texts += made
        number += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert texts == [q.indexed_text for q in chunk_documents(FileLoader([path]).load_documents())]  # what the ingestion embeds
    return texts


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ingest(path: Path, runtime: str, expected: int) -> float:
    """Seconds of one ``pipelines ingest`` of ``path`` into a fresh data folder, checked to have added ``expected`` passages.

    ``runtime``: ``onnx`` or ``torch``, optionally ``:int8`` or ``:float32`` for the passages' weights (default the app's)."""
    embeddings, _, precision = runtime.partition(":")
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as data_dir:
        env = os.environ | {"DEBATEDESK_DATA_DIR": data_dir, "DEBATEDESK_EMBEDDINGS": embeddings}
        if precision:
            env["DEBATEDESK_PASSAGE_PRECISION"] = precision
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pipelines", "ingest", str(path), "--corpus", "bench"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
    if f"{expected} passages ({expected} new" not in done.stdout:
        raise SystemExit(f"the ingestion did not add the {expected} passages torch encoded: {done.stdout.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument(
        "--runtimes",
        default="onnx,onnx:float32,torch",
        help="DEBATEDESK_EMBEDDINGS values to ingest with, in turn; after a colon, the passages' precision (int8 or float32)",
    )
    parser.add_argument(
        "--checkcovid-dir", type=Path, default=Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", ROOT.parent / "shared/data/check-covid"))
    )
    args = parser.parse_args()
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]

    int8_model(onnx_model(AppSettings().model_cache))  # made once per machine; not part of any ingestion
    torch_model = MiniLMEmbedder()
    rates: dict[str, list[float]] = {"torch batched (in process)": [], **{f"pipelines ingest, {r}": [] for r in runtimes}}
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as folder:
        path = Path(folder) / "passages.jsonl"
        texts = passage_file(args.checkcovid_dir, args.passages, path)
        torch_model.embed(texts[:64])  # warm
        lines = len(path.read_text(encoding="utf-8").splitlines())
        print(
            f"{len(texts)} passages from {lines} lines, mean {statistics.mean(len(t) for t in texts):.0f} characters; "
            f"load average {load()}",
            flush=True,
        )
        for rep in range(args.reps):
            started = time.perf_counter()
            torch_model.embed(texts)
            timings = {"torch batched (in process)": time.perf_counter() - started}
            print(
                f"  rep {rep + 1}: torch batched (in process): {timings['torch batched (in process)']:.1f} s (load average {load()})",
                flush=True,
            )
            for runtime in runtimes:
                timings[f"pipelines ingest, {runtime}"] = seconds = ingest(path, runtime, len(texts))
                print(f"  rep {rep + 1}: pipelines ingest, {runtime}: {seconds:.1f} s (load average {load()})", flush=True)
            for name, seconds in timings.items():
                rates[name].append(len(texts) / seconds)
    base = statistics.median(rates["torch batched (in process)"])
    print("\n| what | passages/s (median) | vs torch batched |")
    print("| --- | ---: | ---: |")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.0f} | {statistics.median(values) / base:.2f}x |")


if __name__ == "__main__":
    main()
