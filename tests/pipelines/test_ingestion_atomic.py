"""Ingestion is all or nothing, replaces an edited file, and counts each document once however many processes ingest it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corpora.chunking import chunk_documents
from corpora.loaders import CorpusFileError, FileLoader
from pipelines.core.config import AppSettings
from pipelines.run.tools.corpus_index import CorpusIndex

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def index(tmp_path: Path, embedder) -> CorpusIndex:  # type: ignore[no-untyped-def]
    return CorpusIndex(AppSettings(data_dir=tmp_path / "data"), embedder)


def jsonl(path: Path, good: int, bad_at: int | None = None) -> Path:
    lines = [json.dumps({"id": f"doc{i}", "text": f"Fact number {i} about harbour cranes and tides."}) for i in range(1, good + 1)]
    if bad_at is not None:
        lines.insert(bad_at - 1, '{"id": "broken", "text": ')  # not JSON
    path.write_text("\n".join(lines) + "\n")
    return path


def passages_of(*paths: Path) -> object:
    return chunk_documents(FileLoader(list(paths)).load_documents())


def test_a_file_refused_midway_leaves_nothing_searchable_and_no_empty_corpus(index: CorpusIndex, tmp_path: Path) -> None:
    bad = jsonl(tmp_path / "cranes.jsonl", good=30, bad_at=31)
    with pytest.raises(CorpusFileError, match="cranes.jsonl line 31"):
        index.ingest("harbour", passages_of(bad), batch_size=10)  # type: ignore[arg-type]
    assert "harbour" not in index.corpora() and not index.has("harbour") and index.count("harbour") == 0


def test_a_file_refused_at_its_first_line_leaves_no_empty_corpus(index: CorpusIndex, tmp_path: Path) -> None:
    bad = jsonl(tmp_path / "first.jsonl", good=3, bad_at=1)
    with pytest.raises(CorpusFileError, match="first.jsonl line 1"):
        index.ingest("firstbad", passages_of(bad))  # type: ignore[arg-type]
    assert "firstbad" not in index.corpora()


def test_a_refused_file_leaves_an_existing_corpus_as_it_was(index: CorpusIndex, tmp_path: Path) -> None:
    good = jsonl(tmp_path / "good.jsonl", good=5)
    index.ingest("harbour", passages_of(good))  # type: ignore[arg-type]
    before = index.corpora()["harbour"]
    bad = jsonl(tmp_path / "more.jsonl", good=25, bad_at=26)
    with pytest.raises(CorpusFileError):
        index.ingest("harbour", passages_of(good, bad), batch_size=10)  # type: ignore[arg-type]
    assert index.corpora()["harbour"] == before == {"passages": 5, "documents": 5}


def test_re_ingesting_an_edited_file_replaces_its_passages_and_counts_it_once(index: CorpusIndex, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(" ".join(f"Sentence {i} says the bridge opened in {1900 + i}." for i in range(40)))
    first = index.ingest("notes", passages_of(path))  # type: ignore[arg-type]
    assert first.passages > 1
    path.write_text("The quokka is a small wallaby from Rottnest Island.")
    index.ingest("notes", passages_of(path))  # type: ignore[arg-type]
    assert index.corpora()["notes"] == {"passages": 1, "documents": 1}
    hits = index.search("notes", "bridge opened 1905", k=5, mode="lexical")
    assert all("bridge" not in h.passage.text for h in hits), "the old version's passages are gone"
    index.ingest("notes", passages_of(path))  # type: ignore[arg-type]
    assert index.corpora()["notes"]["documents"] == 1


WORKER = textwrap.dedent(
    """
    import sys, hashlib
    import numpy as np
    from corpora.chunking import chunk_documents
    from corpora.loaders import DemoLoader
    from pipelines.core.config import AppSettings
    from pipelines.run.tools.corpus_index import CorpusIndex

    class HashEmbedder:
        name, dimension = "hash-16", 16
        def embed(self, texts):
            rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8).astype(np.float32) + 1 for t in texts]
            out = np.array(rows, dtype=np.float32).reshape(len(texts), 16)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    index = CorpusIndex(AppSettings(data_dir=sys.argv[1]), HashEmbedder())
    print("ready", flush=True)
    sys.stdin.readline()  # every process starts ingesting at the same moment
    index.ingest("demo", chunk_documents(DemoLoader().load_documents()))
    """
)


def test_processes_ingesting_one_corpus_at_once_count_each_document_once(tmp_path: Path) -> None:
    from corpora.loaders import DemoLoader

    expected = len({d.id for d in DemoLoader().load_documents()})
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path)], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=240) == 0

    class Unused:
        name, dimension = "unused", 16

        def embed(self, texts: list[str]) -> object:
            raise AssertionError("counting needs no embedding")

    counts = CorpusIndex(AppSettings(data_dir=tmp_path), Unused()).corpora()["demo"]  # type: ignore[arg-type]
    assert counts["documents"] == expected
