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
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    logprobs: bool = Field(
        default=False,
        title="Token probabilities (embedded)",
        description="Start the embedded llama.cpp server with logits_all so it returns token probabilities (radar's label probabilities); costs about 0.6 MB of memory per prompt token. Other backends are always asked; without probabilities they are estimated by sampling.",
    )


class RetrievalConfig(BaseModel):
    """How evidence is found."""

    top_k: int = Field(default=3, ge=1, le=50, title="Passages per query", description="How many corpus passages one query returns.")
    web_search: bool = Field(
        default=True, title="Web search", description="Let agents search the web (ddgs); offline the run carries on without it."
    )
    web_top_k: int = Field(default=3, ge=1, le=20, title="Web results per query", description="How many web results one search returns.")
    web_timeout_s: float = Field(default=8.0, gt=0, title="Web timeout (s)", description="How long one web search may take.")


class SingleConfig(BaseModel):
    """The `single` baseline: one agent, one query, one answer."""

    queries: int = Field(default=1, ge=1, le=5, title="Queries", description="How many search queries the agent writes from the claim.")


class MadConfig(BaseModel):
    """The `mad` baseline: two debaters argue from what they know (no retrieval), a judge rules."""

    rounds: int = Field(default=3, ge=1, le=6, title="Rounds", description="How many rounds the two debaters argue before the judge rules.")
    stop_on_agreement: bool = Field(
        default=False,
        title="Stop on agreement",
        description="End early when both debaters give the same label (the published baseline runs every round).",
    )


class RadarConfig(BaseModel):
    """`radar`: Politician vs Scientist over shared evidence, early stop from label probabilities."""

    top_k: int = Field(
        default=20,
        ge=1,
        le=50,
        title="Shared passages",
        description="How many corpus passages are retrieved once for the claim and shared by all agents.",
    )
    web_results: int = Field(
        default=0,
        ge=0,
        le=20,
        title="Web results",
        description="Web results added to the shared evidence when web search is on (0: corpus only, as published).",
    )
    tau_s: float = Field(
        default=-0.15,
        ge=-1,
        le=1,
        title="Stop margin threshold τs",
        description="Stop early only if p(STOP) - p(CONTINUE) is at least this.",
    )
    tau_v: float = Field(
        default=0.7,
        ge=0,
        le=1,
        title="Confidence threshold τv",
        description="Stop early only if the round judge's top label probability is at least this.",
    )
    early_stop: bool = Field(
        default=True, title="Early stop", description="Run the stop agent and round judge after the opening and the rebuttal."
    )
    top_logprobs: int = Field(
        default=10,
        ge=1,
        le=20,
        title="Top tokens",
        description="How many alternative tokens per position the model reports when label probabilities are read from logprobs.",
    )
    samples: int = Field(
        default=5,
        ge=2,
        le=20,
        title="Samples (fallback)",
        description="Answers sampled and counted when the backend gives no token probabilities.",
    )
    sample_temperature: float = Field(
        default=0.8, gt=0, le=2, title="Sampling temperature (fallback)", description="Temperature of the sampled answers in the fallback."
    )
    explain_verdict: bool = Field(
        default=True,
        title="Judge explains",
        description="After the verdict the judge writes a short explanation (one more model call).",
    )


class MadkeConfig(BaseModel):
    """`madke`: one shared evidence pool, each debater picks from it every turn, a judge checks agreement."""

    corpus_k: int = Field(
        default=10,
        ge=0,
        le=50,
        title="Corpus passages",
        description="Corpus passages retrieved for the claim into the shared pool before the debate.",
    )
    web_k: int = Field(
        default=5,
        ge=0,
        le=20,
        title="Web results",
        description="Web results added to the pool when web search is on; offline the debate goes on without them.",
    )
    max_picks: int = Field(
        default=3,
        ge=1,
        le=10,
        title="Picks per turn",
        description="Most pool items a debater may pick in one turn (it may also say none helps).",
    )
    max_rounds: int = Field(
        default=3, ge=1, le=6, title="Rounds", description="Most debate rounds; the judge may end the debate earlier when the agents agree."
    )


class MermaidConfig(BaseModel):
    """`mermaid`: triplet decomposition, a ReAct loop over tools, and an evidence memory across claims."""

    max_steps: int = Field(
        default=5,
        ge=1,
        le=10,
        title="ReAct steps",
        description="Most reasoning steps (tool calls or the answer); at the cap an answer is forced.",
    )
    use_memory: bool = Field(
        default=True,
        title="Recall memory",
        description="Recall evidence kept from earlier claims (by entity match and embedding similarity).",
    )
    remember: bool = Field(
        default=True, title="Remember evidence", description="Keep the evidence this run finds in the memory for later claims."
    )
    memory_tool: bool = Field(
        default=True,
        title="Memory lookup tool",
        description="Offer memory lookup as a ReAct tool, besides the recall for the claim at the start.",
    )
    memory_k: int = Field(
        default=5, ge=1, le=20, title="Memory items", description="Most memory items recalled for a claim or returned by one memory lookup."
    )
    memory_similarity: float = Field(
        default=0.55,
        ge=0,
        le=1,
        title="Memory similarity",
        description="Least cosine similarity between the claim and a kept item for it to be recalled without an entity match.",
    )
    triplets: str = Field(
        default="",
        title="Triplets (override)",
        description="Your own decomposition, e.g. 'masks | reduce | transmission; masks | protect | wearers'; empty lets the model decompose the claim.",
    )
    topic: str = Field(default="", title="Topic (override)", description="Your own topic for the claim; empty lets the model name it.")


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
    mad: MadConfig = Field(default_factory=MadConfig, title="mad", description="Settings of the plain debate baseline.")
    radar: RadarConfig = Field(
        default_factory=RadarConfig, title="radar", description="Settings of the Politician-vs-Scientist half-truth debate."
    )
    madke: MadkeConfig = Field(default_factory=MadkeConfig, title="madke", description="Settings of the shared-knowledge-pool debate.")
    mermaid: MermaidConfig = Field(
        default_factory=MermaidConfig, title="mermaid", description="Settings of the triplet + ReAct + memory protocol."
    )

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
