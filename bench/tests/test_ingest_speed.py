"""The ingestion bench times the ingestion of exactly the texts torch encodes, and notices when it did not."""

import json
from pathlib import Path

import pytest

from bench.ingest_speed import ingest, passage_file
from corpora.chunking import chunk_documents
from corpora.loaders import FileLoader


@pytest.fixture
def check_covid(tmp_path: Path) -> Path:
    """A two-abstract Check-COVID folder: the bench cycles it with copy numbers."""
    folder = tmp_path / "check-covid"
    folder.mkdir()
    rows = [
        {
            "cord_id": "a1",
            "title": "Masks and droplets",
            "abstract": ["Masks stop droplets.", "They were tested in 2020.", "Cloth is weaker.", "Fit matters."],
        },
        {"cord_id": "b2", "title": "Vitamin D", "abstract": ["Vitamin D was given daily.", "No effect on mortality was seen."]},
    ]
    (folder / "corpus.json").write_text("\n".join(json.dumps(r) for r in rows))
    return folder


def test_the_file_makes_exactly_the_passages_torch_encodes(check_covid: Path, tmp_path: Path) -> None:
    path = tmp_path / "passages.jsonl"

    texts = passage_file(check_covid, 7, path)

    made = [p.indexed_text for p in chunk_documents(FileLoader([path]).load_documents())]
    assert texts == made and len(made) == 7
    assert all(t.startswith(("Masks and droplets. ", "Vitamin D. ")) for t in texts), "the title first, not the file's name"
    assert sum("(copy 1)" in t for t in texts) >= 2, "the source's passages are cycled with a copy number"


def test_an_ingestion_that_added_other_passages_stops_the_bench(check_covid: Path, tmp_path: Path) -> None:
    path = tmp_path / "passages.jsonl"
    texts = passage_file(check_covid, 3, path)

    with pytest.raises(SystemExit, match=f"did not add the {len(texts) + 1} passages"):
        ingest(path, "onnx", len(texts) + 1)


def test_a_runtime_names_the_passages_precision_after_a_colon(check_covid: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    seen: list[dict[str, str]] = []

    def run(args: list[str], *, env: dict[str, str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(env)
        return subprocess.CompletedProcess(args, 0, stdout="bench: 1 documents, 3 passages (3 new, 0 already present)")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.delenv("DEBATEDESK_PASSAGE_PRECISION", raising=False)
    ingest(tmp_path / "passages.jsonl", "onnx:float32", 3)
    ingest(tmp_path / "passages.jsonl", "onnx", 3)
    assert [(e["DEBATEDESK_EMBEDDINGS"], e.get("DEBATEDESK_PASSAGE_PRECISION")) for e in seen] == [("onnx", "float32"), ("onnx", None)]
