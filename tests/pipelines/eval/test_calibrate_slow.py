"""The calibration flow on a real model: SmolLM2-135M behind the embedded llama.cpp server, probed, read, fitted, resumed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from corpora.base import Document
from corpora.chunking import chunk_documents
from pipelines.calibration.files import CalibrationShelf, load_calibration
from pipelines.core.config import AppSettings, RunConfig
from pipelines.eval import calibrate as cal
from pipelines.run.llm import embedded
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.conftest import smollm2_gguf
from tests.fakes import DeadWeb, with_settings
from tests.pipelines.eval.test_calibrate import CORPUS, FACTS, negated

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

pytestmark = pytest.mark.slow


@pytest.fixture
def real_services(tmp_path: Path, embedder: Embedder) -> Iterator[Services]:
    settings = AppSettings(data_dir=tmp_path / "data", model_cache=tmp_path / "model-cache")
    services = Services.create(settings, embedder=embedder)
    services.web = DeadWeb()  # type: ignore[assignment]
    services.response_cache = None
    documents = [Document(id=f"doc-{i}", title=f"Note {i}", sentences=(fact + ".",)) for i, fact in enumerate(FACTS)]
    services.index.ingest(CORPUS, chunk_documents(documents))
    yield services
    embedded.stop_server(settings.model_cache)


def test_smollm2_is_probed_read_fitted_and_resumed_like_any_model(real_services: Services) -> None:
    gguf = smollm2_gguf()
    config = with_settings(RunConfig().with_backend("embedded", str(gguf)).model_copy(update={"corpus": CORPUS}), "desk", exhibits=1)
    claims = tuple(
        cal.LabelledClaim(f"c{i}-{n}", text, label)  # type: ignore[arg-type]
        for i, fact in enumerate(FACTS[:5])
        for n, (text, label) in enumerate(((fact, "SUPPORTS"), (negated(fact), "REFUTES")))
    )
    labelled = cal.LabelledSet("five facts and their denials: 10 SUPPORT/REFUTE claims (5 SUPPORT)", claims, corpus=CORPUS)
    plan = cal.plan(config, labelled, real_services)
    assert plan.probe.logprobs, "the embedded server gives token probabilities"
    assert plan.key == gguf.stem.lower() + "--contrast"

    outcome = cal.calibrate(plan, real_services, user=None)

    assert outcome.stopped == "" and len(outcome.readings) == 10
    assert all(s.method == "logprobs" for r in outcome.readings for s in r.stances)
    fitted = outcome.fitted
    assert fitted is not None
    scores = fitted.fit.cross_validated
    assert 0.0 <= scores["auc"] <= 1.0 and scores["log_loss"] > 0
    shelf = CalibrationShelf(real_services.settings.data_dir)
    if scores["auc"] < 0.6:  # a 135M model may well read nothing here: then it is said, and nothing is kept
        assert fitted.calibration is None and "cannot check claims of this kind" in fitted.refused
        assert outcome.saved is None and shelf.versions(plan.key) == []
    else:
        assert outcome.saved is not None
        assert load_calibration(str(gguf), "contrast", real_services.settings.data_dir) == outcome.saved.calibration
    again = cal.calibrate(plan, real_services, user=None, save=False)
    assert [r.how for r in again.readings] == ["stored"] * 10
    assert again.fitted is not None and again.fitted.fit.cross_validated == scores
