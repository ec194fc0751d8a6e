"""Shared fixtures: one MiniLM per test session, and a data folder with the demo corpus indexed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pipelines.runner import Services
from pipelines.tools.embeddings import MiniLMEmbedder, default_embedder
from tests.fakes import make_services

CHECK_COVID = Path(__file__).resolve().parents[2] / "shared" / "data" / "check-covid"


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    return default_embedder()


@pytest.fixture(scope="session")
def demo_data_dir(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMEmbedder) -> Path:
    """A data folder with the demo corpus indexed once for the whole session."""
    data_dir = tmp_path_factory.mktemp("data")
    make_services(data_dir, embedder).ensure_corpus("demo")
    return data_dir


@pytest.fixture
def services(demo_data_dir: Path, embedder: MiniLMEmbedder) -> Services:
    """Services over the indexed demo corpus, with a dead web and the fake backend from config."""
    return make_services(demo_data_dir, embedder)
