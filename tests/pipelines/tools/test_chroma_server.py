"""The corpus served by a Chroma server (``chroma run``, as a shared desk's workers use it through DEBATEDESK_CHROMA_URL) gives
the same passages as the embedded store for the same queries.

The test starts the pinned chromadb's own server on a free loopback port in a temp folder, indexes the demo corpus into it
from one data folder, and searches it from another, empty one (a worker on another machine: its BM25 index is built from
the server's passages), then compares with the embedded demo corpus, in every search mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.core.config import AppSettings
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.environment import free_port
from tests.fakes import make_services

CHROMA = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
QUERIES = [
    "Masks reduce transmission of respiratory viruses",
    "Vaccines cause autism",
    "The Moon landings were staged",
    "How many people died of influenza?",
]


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Chroma server (``chroma run`` from the pinned chromadb) on a free loopback port, its data in a temp folder."""
    if CHROMA is None:
        pytest.skip("the chroma command (installed with the pinned chromadb) is not on this machine")
    folder = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(
        [CHROMA, "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None, (folder / "server.log").read_text(errors="replace")[-2000:]
                assert time.monotonic() < deadline, "the Chroma server did not answer within 60 s"
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _found(hits: list) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(h.passage.id, h.passage.doc_id, h.passage.text) for h in hits]


def test_the_corpus_served_by_a_chroma_server_gives_the_same_passages_as_the_embedded_one(
    chroma_url: str, demo_data_dir: Path, embedder: Embedder, tmp_path: Path
) -> None:
    embedded = make_services(demo_data_dir, embedder)
    assert not embedded.settings.chroma_url

    desk = Services.create(AppSettings(data_dir=tmp_path / "app", chroma_url=chroma_url), embedder=embedder)
    desk.ensure_corpus("demo")  # indexed into the server, from the app's data folder
    assert not (tmp_path / "app" / "chroma").exists(), "nothing in an embedded store: the passages are on the server"
    # a worker on another machine: the same server, an empty data folder of its own (its BM25 index made from the server's)
    worker = Services.create(AppSettings(data_dir=tmp_path / "worker", chroma_url=chroma_url), embedder=embedder)

    assert worker.index.count("demo") == embedded.index.count("demo") > 0
    for mode in ("hybrid", "dense", "lexical"):
        for query in QUERIES:
            here = embedded.index.search("demo", query, k=5, mode=mode)  # type: ignore[arg-type]
            there = worker.index.search("demo", query, k=5, mode=mode)  # type: ignore[arg-type]
            assert _found(there) == _found(here), f"{mode} search for {query!r}"
            assert [h.score for h in there] == pytest.approx([h.score for h in here], abs=1e-3)
    several = embedded.index.search("demo", QUERIES[:2], k=4)
    assert _found(worker.index.search("demo", QUERIES[:2], k=4)) == _found(several), "a claim and its rewrites at once"
