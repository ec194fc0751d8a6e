"""The embedded server's lazy token probabilities give exactly what llama-cpp-python's own code gives."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from llama_cpp import llama as llama_module
from llama_cpp.llama import Llama

from pipelines.run.llm.embedded import grammar_server as llama_server


@pytest.fixture
def installed():  # type: ignore[no-untyped-def]
    llama_server.install()
    yield
    llama_server.uninstall()


def test_log_softmax_of_the_rows_read_equals_that_of_the_whole_matrix(installed) -> None:  # type: ignore[no-untyped-def]
    logits = np.random.default_rng(0).normal(size=(7, 5000)).astype(np.single)
    lazy = Llama.logits_to_logprobs(logits)
    assert isinstance(lazy, llama_server.RowLogprobs)
    assert np.array_equal(lazy[4:], llama_server._original_logits_to_logprobs(logits)[4:])
    row = logits[0]
    assert np.array_equal(Llama.logits_to_logprobs(row), llama_server._original_logits_to_logprobs(row)), "a single row is direct"


def test_the_top_alternatives_come_out_as_a_full_sort_would_put_them(installed) -> None:  # type: ignore[no-untyped-def]
    values = np.random.default_rng(1).normal(size=20_000).astype(np.single)
    values[[5, 9]] = values.max() + 1  # a tie at the top: the higher index first, as sorted(reverse=True) does
    top = llama_module.sorted(zip(values, range(len(values)), strict=True), reverse=True)  # type: ignore[attr-defined]
    full = sorted(zip(values, range(len(values)), strict=True), reverse=True)
    assert top == full[: llama_server.TOP_ALTERNATIVES]
    assert llama_module.sorted([3, 1, 2]) == [1, 2, 3], "anything else is sorted whole"  # type: ignore[attr-defined]


def test_uninstall_restores_the_library() -> None:
    llama_server.install()
    llama_server.uninstall()
    assert not hasattr(llama_module, "sorted")
    assert not isinstance(Llama.logits_to_logprobs(np.zeros((2, 3), dtype=np.single)), llama_server.RowLogprobs)
