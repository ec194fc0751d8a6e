"""The embedded model's llama.cpp server, decoding schema-enforced answers grammar-first.

llama-cpp-python 0.3.36 filters every token of the vocabulary through the JSON grammar at
every step (151,936 tokens for Qwen), and only then takes the greedy pick: on this machine
structured answers decoded at 4-5.5 tokens/s against 7-9 for free text. At temperature 0
that filtering is mostly wasted: if the grammar allows the model's top token, that token
is the best allowed one. So this server asks the grammar about the top token first and
filters the whole vocabulary only when it is refused (what llama.cpp's own server does).
The chosen token is the same either way; ``bench/grammar_first.py`` checks that and
measures the speed.

Run as ``python -m pipelines.run.llm.embedded.grammar_server`` with llama_cpp.server's own arguments.
"""

from __future__ import annotations

import ctypes
import heapq
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals
from llama_cpp import llama as llama_module
from llama_cpp.llama import Llama
from llama_cpp.server.__main__ import main as serve  # llama_cpp.server's own entry point, run after install()

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
assert _TOKEN_DATA.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)


class GrammarFirst:
    """A sampler for a llama.cpp chain: the grammar checks the top token, and the whole vocabulary only if it refuses it."""

    def __init__(self, model: _internals.LlamaModel, grammar: Any) -> None:
        self.grammar = llama_cpp.llama_sampler_init_grammar(model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._one, ctypes.POINTER(llama_cpp.llama_token_data)), size=1, selected=-1, sorted=False
        )
        self.full_checks = 0  # steps where the top token was refused and the whole vocabulary was filtered
        self.steps = 0

        # The callbacks must outlive the chain: keep them on the object.
        self._apply = llama_cpp.llama_sampler_i_apply(lambda _s, cur_p: self.apply(cur_p))
        self._accept = llama_cpp.llama_sampler_i_accept(lambda _s, token: llama_cpp.llama_sampler_accept(self.grammar, token))
        self._reset = llama_cpp.llama_sampler_i_reset(lambda _s: llama_cpp.llama_sampler_reset(self.grammar))
        iface = llama_cpp.llama_sampler_i()
        iface.apply, iface.accept, iface.reset = self._apply, self._accept, self._reset
        iface.name = llama_cpp.llama_sampler_i_name(0)
        iface.clone = llama_cpp.llama_sampler_i_clone(0)
        iface.free = llama_cpp.llama_sampler_i_free(0)  # the chain never frees it: close() does
        self._iface = iface
        self.sampler = llama_cpp.llama_sampler()
        self.sampler.iface = ctypes.pointer(iface)
        self.sampler.ctx = None

    def apply(self, cur_p: Any) -> None:
        self.steps += 1
        array = cur_p.contents
        raw = (ctypes.c_char * (array.size * _TOKEN_DATA.itemsize)).from_address(ctypes.addressof(array.data.contents))
        data = np.frombuffer(raw, dtype=_TOKEN_DATA)
        best = int(np.argmax(data["logit"]))  # the first of equal maxima, as llama.cpp's greedy pick
        self._one[0].id, self._one[0].logit, self._one[0].p = int(data["id"][best]), float(data["logit"][best]), float(data["p"][best])
        self._one_array.selected, self._one_array.sorted = -1, False
        llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._one_array))
        if np.isfinite(self._one[0].logit):
            return  # allowed: the greedy pick that follows takes this same token
        self.full_checks += 1
        llama_cpp.llama_sampler_apply(self.grammar, cur_p)

    def close(self) -> None:
        if self.grammar:
            llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None


_original_init_sampler = Llama._init_sampler


def _init_sampler(self: Llama, *args: Any, **kwargs: Any) -> _internals.LlamaSampler:
    """Llama._init_sampler, with the grammar checked top-token-first when the pick is greedy."""
    names = ("top_k", "top_p", "min_p", "typical_p", "temp", "repeat_penalty", "frequency_penalty", "presence_penalty")
    params = dict(zip(names, args, strict=False)) | kwargs
    grammar = params.get("grammar")
    greedy = params.get("temp", 0.8) == 0.0 and not params.get("mirostat_mode") and params.get("logits_processor") is None
    if grammar is None or not greedy:
        return _original_init_sampler(self, *args, **kwargs)
    sampler = _internals.LlamaSampler()
    sampler.add_penalties(
        n_vocab=self._n_vocab,
        penalty_last_n=self.last_n_tokens_size,
        penalty_repeat=params.get("repeat_penalty", 1.0),
        penalty_freq=params.get("frequency_penalty", 0.0),
        penalty_present=params.get("presence_penalty", 0.0),
    )
    first = GrammarFirst(self._model, grammar)
    llama_cpp.llama_sampler_chain_add(sampler.sampler, ctypes.pointer(first.sampler))
    # LlamaSampler removes its custom samplers from the chain before freeing it; then ours frees the grammar.
    sampler.custom_samplers.append((llama_cpp.llama_sampler_chain_n(sampler.sampler) - 1, first))  # type: ignore[arg-type]
    sampler._exit_stack.callback(first.close)
    sampler.add_greedy()
    return sampler


# --- token probabilities without the whole-prompt work ------------------------------------
#
# A non-streamed answer with ``logprobs`` made llama-cpp-python 0.3.36 take the log-softmax of
# every prompt position's logits (about 0.3-0.6 s for a 300-token prompt over Qwen's 151,936
# tokens), keep only the answer's rows, then sort the whole vocabulary as Python tuples for each
# answer token (about 0.2 s) to keep its top few. desk reads one token per call, 24 calls a
# claim, and that work cost more than the model's own. Both are done lazily here: the log-softmax
# only for the rows read, and the sort only as far as the top alternatives. Same numbers.

TOP_ALTERNATIVES = 64  # more than any request may ask for (OpenAI caps top_logprobs at 20)
_original_logits_to_logprobs = Llama.logits_to_logprobs


class RowLogprobs:
    """Log-probabilities of a logits matrix, computed only for the rows that are read."""

    def __init__(self, logits: np.ndarray) -> None:
        self._logits = logits

    def __getitem__(self, rows: Any) -> np.ndarray:
        return _original_logits_to_logprobs(self._logits[rows])

    def __len__(self) -> int:
        return len(self._logits)


def logits_to_logprobs(logits: Any, axis: int = -1) -> Any:
    """Llama.logits_to_logprobs, lazy for a matrix of logits (rows on demand), direct otherwise."""
    if isinstance(logits, np.ndarray) and logits.ndim == 2 and axis == -1:
        return RowLogprobs(logits)
    return _original_logits_to_logprobs(logits, axis)


def top_sorted(iterable: Any, *, key: Any = None, reverse: bool = False) -> list[Any]:
    """``sorted`` for llama_cpp.llama, whose only sorts are of (logprob, token) pairs in descending order cut to the top few.

    A long descending sort keeps its first TOP_ALTERNATIVES items (the same, in the same order,
    as a full sort would put first); anything else is sorted whole.
    """
    items = list(iterable)
    if reverse and key is None and len(items) > TOP_ALTERNATIVES:
        return heapq.nlargest(TOP_ALTERNATIVES, items)
    return sorted(items, key=key, reverse=reverse)


def install() -> None:
    """Make every Llama in this process decode greedy grammar-constrained answers grammar-first, and read token probabilities lazily."""
    Llama._init_sampler = _init_sampler  # type: ignore[method-assign]
    Llama.logits_to_logprobs = staticmethod(logits_to_logprobs)  # type: ignore[method-assign, assignment]
    llama_module.sorted = top_sorted  # type: ignore[attr-defined]


def uninstall() -> None:
    Llama._init_sampler = _original_init_sampler  # type: ignore[method-assign]
    Llama.logits_to_logprobs = staticmethod(_original_logits_to_logprobs)  # type: ignore[method-assign]
    if hasattr(llama_module, "sorted"):
        del llama_module.sorted


def main() -> None:
    install()
    serve()


if __name__ == "__main__":
    main()
