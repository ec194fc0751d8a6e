"""Ingestion speed, side by side: `pipelines ingest` (process start included) against MiniLM on torch encoding the same texts.

    nice -n 19 .venv/bin/python bench/ingest_speed.py [--passages 2000] [--reps 2] [--checkcovid-dir DIR]

Writes ``--passages`` Check-COVID passages (3 sentences each, title first, as the app indexes
them; cycled with a copy number once the 1,649 run out) to a JSON-lines file, one passage a
line, so each line is one document of one passage. Then, per repetition and in turn:

- torch batched: sentence-transformers on torch encodes those texts in this process, in
  batches of 64 (the model already loaded: the encoder's own rate, the issue's yardstick);
- ``python -m pipelines ingest FILE --corpus bench`` into a fresh data folder, once with
  ``DEBATEDESK_EMBEDDINGS=onnx`` (the default) and once with ``torch``: wall time of the
  whole process (interpreter start, imports, model load, chunking, embedding, Chroma, BM25).

Prints each figure with the load average when it was taken, then the medians and the ratio of
each ingest to the torch-batched rate. The ONNX export in the model cache is made before the
first timing (it is made once per machine, not per ingestion).
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
from corpora.loaders import CheckCovidLoader
from pipelines.config import AppSettings
from pipelines.tools.embeddings import MiniLMEmbedder, onnx_model

ROOT = Path(__file__).resolve().parents[1]


def passages(folder: Path, count: int) -> list[str]:
    texts = [p.indexed_text for p in chunk_documents(CheckCovidLoader(folder).load_documents())]
    return [texts[i % len(texts)] if i < len(texts) else f"(copy {i // len(texts)}) {texts[i % len(texts)]}" for i in range(count)]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ingest(path: Path, runtime: str) -> float:
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as data_dir:
        env = os.environ | {"DEBATEDESK_DATA_DIR": data_dir, "DEBATEDESK_EMBEDDINGS": runtime}
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pipelines", "ingest", str(path), "--corpus", "bench"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument(
        "--checkcovid-dir", type=Path, default=Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", ROOT.parent / "shared/data/check-covid"))
    )
    args = parser.parse_args()

    texts = passages(args.checkcovid_dir, args.passages)
    onnx_model(AppSettings().model_cache)  # made once per machine; not part of any ingestion
    torch_model = MiniLMEmbedder()
    torch_model.embed(texts[:64])  # warm
    rates: dict[str, list[float]] = {"torch batched (in process)": [], "pipelines ingest, onnx": [], "pipelines ingest, torch": []}
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as folder:
        path = Path(folder) / "passages.jsonl"
        path.write_text("".join(json.dumps({"id": f"p{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
        print(f"{len(texts)} passages, mean {statistics.mean(len(t) for t in texts):.0f} characters; load average {load()}", flush=True)
        for rep in range(args.reps):
            started = time.perf_counter()
            torch_model.embed(texts)
            timings = {"torch batched (in process)": time.perf_counter() - started}
            for runtime in ("onnx", "torch"):
                timings[f"pipelines ingest, {runtime}"] = ingest(path, runtime)
            for name, seconds in timings.items():
                rates[name].append(len(texts) / seconds)
                print(
                    f"  rep {rep + 1}: {name}: {seconds:.1f} s, {len(texts) / seconds:.0f} passages/s (load average {load()})", flush=True
                )
    base = statistics.median(rates["torch batched (in process)"])
    print("\n| what | passages/s (median) | vs torch batched |")
    print("| --- | ---: | ---: |")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.0f} | {statistics.median(values) / base:.2f}x |")


if __name__ == "__main__":
    main()
