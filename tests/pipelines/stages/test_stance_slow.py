"""desk's stance readout on a real model: SmolLM2-135M behind the embedded llama.cpp server (the lazy-logprob server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.domain import Evidence
from pipelines.run.llm import embedded
from pipelines.run.llm.client import LLM
from pipelines.stages.stance import STANCES, negate, read_stance
from tests.conftest import smollm2_gguf

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

pytestmark = pytest.mark.slow
EXHIBIT = Evidence(
    id="E1", source="corpus", title="Masks", text="Randomised trials found that masks reduce transmission of respiratory viruses."
)


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppSettings]:
    cache = tmp_path_factory.mktemp("model-cache")
    yield AppSettings(model_cache=cache)
    embedded.stop_server(cache)


async def test_the_stance_is_read_from_the_answer_letters_of_every_option_order(settings: AppSettings) -> None:
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=16, logprobs=True)
    llm = LLM(embedded.build_embedded(spec, settings), role="judge", model_name="smollm2")

    stance = await read_stance(llm, "Masks reduce transmission of respiratory viruses.", EXHIBIT, orders=3)

    assert stance.method == "logprobs", stance.note
    assert len(stance.per_order) == 3
    for reading in stance.per_order:
        assert sum(reading.values()) == pytest.approx(1, abs=1e-3), "each order's letters renormalised over A, B, C"
    assert sum(stance.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert set(stance.probabilities) == set(STANCES)
    # The same letters answered with the same prompts twice: the lazy logprobs of the server are deterministic.
    again = await read_stance(llm, "Masks reduce transmission of respiratory viruses.", EXHIBIT, orders=3)
    assert again.probabilities == stance.probabilities


async def test_the_claims_opposite_is_written_and_read_with_worked_examples(settings: AppSettings) -> None:
    spec = ModelSpec(backend="embedded", model=str(smollm2_gguf()), max_tokens=16, logprobs=True)
    llm = LLM(embedded.build_embedded(spec, settings), role="judge", model_name="smollm2")
    claim = "Masks reduce transmission of respiratory viruses."

    opposite, by_model = await negate(llm, claim)

    assert opposite and " ".join(opposite.lower().split()) != " ".join(claim.lower().split())
    assert by_model or opposite.startswith("It is not true that")
    stance = await read_stance(llm, claim, EXHIBIT, orders=3, negation=opposite, shots=3)
    assert stance.method == "logprobs", stance.note
    assert len(stance.per_order) == 6 and stance.opposite_from == 3
    assert sum(stance.probabilities.values()) == pytest.approx(1, abs=1e-3)
