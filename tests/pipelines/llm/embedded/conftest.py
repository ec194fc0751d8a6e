"""What the slow embedded-server tests share: a model cache of their own, and the verdict schema they ask for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from pipelines.run.llm import embedded


class Answer(BaseModel):
    """A verdict as the protocols ask for one: a label from the schema's enum and a reason."""

    label: Literal["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    reason: str


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A model cache for one test module; the server started in it is stopped when the module ends."""
    path = tmp_path_factory.mktemp("model-cache")
    yield path
    embedded.stop_server(path)
