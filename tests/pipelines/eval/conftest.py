"""Fixtures for evaluation tests: where Check-COVID is, and a small check-covid corpus indexed once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader
from pipelines.eval.datasets import load_dataset
from pipelines.tools.embeddings import MiniLMEmbedder
from tests.conftest import CHECK_COVID
from tests.fakes import make_services

EVAL_SAMPLE = 10


def find_check_covid() -> Path:
    """The dataset beside the project (../shared), or where DEBATEDESK_CHECKCOVID_DIR says (a git worktree elsewhere)."""
    if CHECK_COVID.is_dir():
        return CHECK_COVID
    return Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR", str(CHECK_COVID)))


@pytest.fixture(scope="session")
def checkcovid_dir() -> Path:
    return find_check_covid()


@pytest.fixture(scope="session")
def checkcovid_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMEmbedder, checkcovid_dir: Path) -> Path:
    """A data folder whose `check-covid` corpus holds the abstracts of the 10-claim dev sample and 40 others.

    Indexing all 347 abstracts takes minutes on 2 busy cores; these 60-odd keep the claims'
    deciding papers among distractors, which is what the evaluation test needs.
    """
    data_dir = tmp_path_factory.mktemp("checkcovid-data")
    sample = load_dataset("check-covid", "dev", checkcovid_dir=checkcovid_dir).sample(EVAL_SAMPLE, seed=0)
    wanted = {g.doc_id for item in sample.items for g in item.gold_evidence}
    documents = list(CheckCovidLoader(checkcovid_dir).load_documents())
    chosen = [d for d in documents if d.id in wanted] + [d for d in documents if d.id not in wanted][:40]
    services = make_services(data_dir, embedder)
    services.index.ingest("check-covid", chunk_documents(chosen))
    return data_dir
