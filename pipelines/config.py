"""One configuration model: defaults, titles and descriptions for every knob; env vars override.

``RunConfig`` is what one run needs (protocol, models per role, thresholds); it is
snapshotted into the run record without secrets. ``AppSettings`` is where the app keeps
its data. Both read ``DEBATEDESK_*`` variables (nested fields with ``__``), e.g.
``DEBATEDESK_DEBATER__BACKEND=openai`` or ``DEBATEDESK_DATA_DIR=/srv/desk``.
This module is the only place in ``pipelines/`` that reads the environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from pipelines.tools.source_policy import parse_domains

ENV_PREFIX = "DEBATEDESK_"
MAX_CLAIM_CHARS = 2000


class ModelSpec(BaseModel):
    """Which model plays a role, and where it is served."""

    backend: str = Field(
        default="embedded",
        title="Backend",
        description="fake (instant, not a real model), embedded (local llama.cpp), or openai (any OpenAI-compatible endpoint).",
    )
    model: str = Field(
        default="",
        title="Model",
        description="Model name at the endpoint; empty means the backend's default.",
    )
    base_url: str = Field(
        default="",
        title="Base URL",
        description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama; empty means OPENAI_BASE_URL or api.openai.com.",
    )
    api_key: SecretStr = Field(
        default=SecretStr(""),
        title="API key",
        description="Key for the endpoint; empty means OPENAI_API_KEY. Never stored with a run.",
    )
    temperature: float = Field(default=0.0, ge=0, le=2, title="Temperature", description="Sampling temperature; 0 is the most repeatable.")
    max_tokens: int = Field(default=384, ge=16, le=8192, title="Max tokens", description="Longest answer a call may produce.")
    timeout_s: float = Field(default=300.0, gt=0, title="Timeout (s)", description="How long one call may take before it fails.")
    max_retries: int = Field(default=2, ge=0, le=5, title="Retries", description="Extra attempts when structured output is malformed.")
    concurrency: int = Field(default=4, ge=1, le=64, title="Parallel calls", description="How many calls to this backend may run at once.")


class RetrievalConfig(BaseModel):
    """How evidence is found."""

    top_k: int = Field(default=3, ge=1, le=50, title="Passages per query", description="How many corpus passages one query returns.")
    web_search: bool = Field(
        default=True, title="Web search", description="Let agents search the web (ddgs); offline the run carries on without it."
    )
    web_top_k: int = Field(default=3, ge=1, le=20, title="Web results per query", description="How many web results one search returns.")
    web_timeout_s: float = Field(default=8.0, gt=0, title="Web timeout (s)", description="How long one web search may take.")
    mode: Literal["hybrid", "dense", "lexical"] = Field(
        default="hybrid",
        title="Search mode",
        description="hybrid (meaning and words, fused: the best on Check-COVID), dense (meaning only, MiniLM) or lexical (words only, BM25).",
    )
    rerank: Literal["none", "sentences", "judge"] = Field(
        default="none",
        title="Rerank",
        description="Re-order the fused top 20 before keeping the best: sentences (each document's best sentence by meaning, offline, fast), judge (the judge model scores them in one call) or none.",
    )
    source_policy: Literal["open", "health"] = Field(
        default="open",
        title="Web source policy",
        description="open (any site) or health (only .gov, .edu, who.int and medical journals); the domain lists below add to it.",
    )
    allow_domains: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Allowed web domains",
        description="Comma-separated; when set, web results from other domains never reach an agent. Subdomains match: nih.gov allows www.ncbi.nlm.nih.gov; .edu allows every .edu site.",
    )
    deny_domains: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Denied web domains",
        description="Comma-separated; web results from these domains (and their subdomains) never reach an agent. Wins over the allowed list.",
    )

    @field_validator("allow_domains", "deny_domains", mode="before")
    @classmethod
    def _domains(cls, value: Any) -> list[str]:
        return parse_domains(value if isinstance(value, str | list | tuple) else str(value))


class SingleConfig(BaseModel):
    """The `single` baseline: one agent, one query, one answer."""

    queries: int = Field(default=1, ge=1, le=5, title="Queries", description="How many search queries the agent writes from the claim.")


class RunConfig(BaseSettings):
    """Everything one run depends on. Snapshotted into the run record (without secrets)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore")

    protocol: str = Field(default="single", title="Protocol", description="The debate method to run.")
    corpus: str = Field(default="demo", title="Corpus", description="Local evidence corpus to search.")
    debater: ModelSpec = Field(default_factory=ModelSpec, title="Debater model", description="The model that argues.")
    judge: ModelSpec = Field(default_factory=ModelSpec, title="Judge model", description="The model that rules.")
    scorer: ModelSpec = Field(default_factory=ModelSpec, title="Scorer model", description="The model that scores answers and evidence.")
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig, title="Retrieval", description="How evidence is found.")
    single: SingleConfig = Field(default_factory=SingleConfig, title="single", description="Settings of the single-agent baseline.")

    def with_backend(self, backend: str, model: str = "") -> RunConfig:
        """The same config with every role on one backend (the CLI's --backend)."""
        update: dict[str, Any] = {"backend": backend}
        if model:
            update["model"] = model
        return self.model_copy(update={role: getattr(self, role).model_copy(update=update) for role in ROLES})

    def role(self, name: str) -> ModelSpec:
        spec = getattr(self, name)
        assert isinstance(spec, ModelSpec)
        return spec

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy for the run record: API keys are dropped, not masked."""
        data = self.model_dump(mode="json")
        for role in ROLES:
            data[role].pop("api_key", None)
        return data

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> RunConfig:
        """Rebuild a config from a run record (keys come from the environment again)."""
        return cls.model_validate(data)


ROLES: tuple[Literal["debater", "judge", "scorer"], ...] = ("debater", "judge", "scorer")


class AppSettings(BaseSettings):
    """Where the app keeps its data and which shared services it uses."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    data_dir: Path = Field(default=Path("data"), title="Data folder", description="Chroma index, run database and caches live here.")
    chroma_url: str = Field(
        default="",
        title="Chroma server",
        description="http://host:port of a Chroma server; empty means an embedded store in the data folder.",
    )
    database_url: str = Field(
        default="",
        title="Run database",
        description="SQLAlchemy URL (e.g. postgresql+psycopg://...); empty means SQLite in the data folder.",
    )
    model_cache: Path = Field(
        default=Path.home() / ".cache" / "debatedesk",
        title="Model cache",
        description="Where the embedded model is assembled and the llama.cpp server state is kept.",
    )
    checkcovid_dir: Path = Field(
        default=Path("../shared/data/check-covid"),
        title="Check-COVID folder",
        description="Path to the Check-COVID dataset (corpus.json and the claim files).",
    )

    @property
    def sqlite_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'runs.sqlite').resolve()}"


def openai_env() -> tuple[str, str]:
    """The OpenAI base URL and key from the environment (the fallback for empty fields)."""
    return os.environ.get("OPENAI_BASE_URL", ""), os.environ.get("OPENAI_API_KEY", "")
