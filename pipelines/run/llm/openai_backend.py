"""The `openai` backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""

from __future__ import annotations

import httpx2
import openai
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from pipelines.core.config import AppSettings, ModelSpec, openai_env
from pipelines.run.llm.registry import Backend

DEFAULT_MODEL = "gpt-4o-mini"


def build_openai(spec: ModelSpec, settings: AppSettings) -> BaseChatModel:
    env_url, env_key = openai_env()
    return chat_model_for_endpoint(
        spec,
        base_url=spec.base_url or env_url or None,
        api_key=spec.api_key.get_secret_value() or env_key or "not-set",
        model=spec.model or DEFAULT_MODEL,
    )


def chat_model_for_endpoint(
    spec: ModelSpec, *, base_url: str | None, api_key: str, model: str, chat_class: type[ChatOpenAI] = ChatOpenAI
) -> ChatOpenAI:
    """A ChatOpenAI (or subclass) for one endpoint; shared by `openai` and `embedded`.

    langchain-openai shares one cached async HTTP client per base URL, and a pooled
    keep-alive connection belongs to the event loop that opened it; each run has its own
    loop, so the next run failed with "Event loop is closed". Without keep-alive nothing
    outlives its loop, and a fresh connection costs little next to a model call.
    """
    no_keepalive = openai.DefaultAsyncHttpxClient(limits=httpx2.Limits(max_keepalive_connections=0))
    return chat_class(
        http_async_client=no_keepalive,
        model=model,
        base_url=base_url,
        api_key=api_key,  # type: ignore[arg-type]
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,  # type: ignore[call-arg]
        timeout=spec.timeout_s,
        # A local server queues concurrent calls: a call may wait minutes for its first chunk.
        stream_chunk_timeout=spec.timeout_s,
        max_retries=1,
        stream_usage=True,
    )


BACKEND = Backend(
    name="openai",
    build=build_openai,
    description="Any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, a llama.cpp server.",
    default_model=DEFAULT_MODEL,
)
