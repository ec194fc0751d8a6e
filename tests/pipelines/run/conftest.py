"""Fixtures the run tests share: services whose run store is each of the test databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.record.store import RunStore
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import make_services
from tests.stores import store_url  # noqa: F401  (the fixture)


@pytest.fixture
def fresh(store_url: str, demo_data_dir: Path, embedder: Embedder) -> Services:  # noqa: F811
    """The fake services over the demo corpus, with an empty run store on SQLite and on PostgreSQL."""
    services = make_services(demo_data_dir, embedder)
    services.store = RunStore(store_url)
    return services
