"""One configuration model: defaults, titles and descriptions for every knob; env vars override.

``RunConfig`` is what one run needs (protocol, models per role, thresholds); it is
snapshotted into the run record without secrets. ``AppSettings`` is where the app keeps
its data. Both read ``DEBATEDESK_*`` variables (nested fields with ``__``), e.g.
``DEBATEDESK_DEBATER__BACKEND=openai`` or ``DEBATEDESK_DATA_DIR=/srv/desk``.
This module is the only place in ``pipelines/`` that reads the environment.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, create_model, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.urls import scrub_url, url_secrets
from pipelines.run.tools.source_policy import parse_domains

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
    concurrency: int = Field(
        default=4,
        ge=1,
        le=64,
        title="Parallel calls",
        description="How many calls to this backend may run at once; the embedded model's server takes at most its slots (one on 2 threads), the rest wait in the app, where their timeout does not run.",
    )
    logprobs: bool = Field(
        default=False,
        title="Token probabilities (embedded)",
        description="Start the embedded llama.cpp server with logits_all so it returns token probabilities (radar's label probabilities); costs about 0.6 MB of memory per prompt token. Other backends are always asked; without probabilities they are estimated by sampling.",
    )
    cache: Literal["auto", "on", "off"] = Field(
        default="auto",
        title="Response cache",
        description="Reuse the stored answer to an identical call (same model, prompt and parameters). auto: on for fake and embedded, off for paid APIs.",
    )


class RetrievalConfig(BaseModel):
    """How evidence is found."""

    top_k: int = Field(
        default=3,
        ge=1,
        le=50,
        title="Passages per query",
        description="How many documents one corpus query returns, each as its best passage.",
    )
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
    rewrites: int = Field(
        default=0,
        ge=0,
        le=5,
        title="Query rewrites",
        description="Before the first search for the claim, the model rewrites it into this many search queries; each is searched as well and keeps its own top results, so more documents reach the pool (one extra model call per run).",
    )
    rerank: Literal["none", "sentences", "judge"] = Field(
        default="none",
        title="Rerank",
        description="Re-order the fused top 20 before keeping the best: sentences (each passage's best sentence by meaning: offline, but it embeds 60 sentences per query), judge (the judge model scores them in one call) or none.",
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


LLAMA_CACHE_RAM_MIB = 512  # the embedded server's prompt cache (docs/measurements/2026-11-26-server-memory.md)


class PauseConfig(BaseModel):
    """Step mode's pauses: where a run waits for the checker (the person) between rounds."""

    step_mode: bool = Field(
        default=False,
        title="Step mode",
        description="Pause after each round so the checker can edit the next queries, strike or add evidence, then continue or stop.",
    )
    pause_timeout_min: float = Field(
        default=60.0,
        gt=0,
        le=24 * 60,
        title="Pause timeout (min)",
        description="How long a paused run waits for the checker; then it is marked interrupted and can be resumed from History.",
    )


class BudgetConfig(BaseModel):
    """Spend limits: a run (and a batch) stops cleanly between model calls once it reaches one; 0 means no limit."""

    max_calls: int = Field(
        default=0,
        ge=0,
        le=100_000,
        title="Calls per run",
        description="Most model calls one run may make (answers from a cache are free); 0: no limit.",
    )
    max_tokens: int = Field(
        default=0, ge=0, le=100_000_000, title="Tokens per run", description="Most tokens (in and out) one run may spend; 0: no limit."
    )
    max_cost: float = Field(
        default=0.0,
        ge=0,
        le=100_000,
        title="Money per run",
        description="Most money one run may spend, at the prices below (in their currency); 0: no limit.",
    )
    batch_max_calls: int = Field(
        default=0,
        ge=0,
        le=10_000_000,
        title="Calls per batch",
        description="Most model calls a whole batch may make; then it starts no more claims. 0: no limit.",
    )
    batch_max_tokens: int = Field(
        default=0, ge=0, le=1_000_000_000, title="Tokens per batch", description="Most tokens a whole batch may spend; 0: no limit."
    )
    batch_max_cost: float = Field(
        default=0.0,
        ge=0,
        le=1_000_000,
        title="Money per batch",
        description="Most money a whole batch may spend, at the prices below; 0: no limit.",
    )
    prices: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="Prices per 1,000 tokens",
        description="Comma-separated model=price pairs, the price of 1,000 tokens (in and out) in your currency, e.g. gpt-4o-mini=0.0006. A model not listed costs the default price.",
        examples=["gpt-4o-mini=0.0006, gpt-4o=0.01"],
    )
    default_price: float = Field(
        default=0.0,
        ge=0,
        le=1000,
        title="Default price per 1,000 tokens",
        description="The price of a model the list does not name (0: local models cost nothing).",
    )

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> list[str]:
        return [f"{model}={price:g}" for model, price in parse_prices(value).items()]

    def price_of(self, model: str) -> float:
        """The price of 1,000 tokens of ``model``."""
        return parse_prices(self.prices).get(model, self.default_price)

    def unpriced_models(self, models: Iterable[str]) -> list[str]:
        """Of ``models``, those a money limit could never count (no listed price and no default price); none without one."""
        if not (self.max_cost or self.batch_max_cost) or self.default_price:
            return []
        listed = parse_prices(self.prices)
        return sorted({m for m in models if m not in listed})

    def describe(self) -> str:
        """The limits in force in a few words ("40 calls, 0.5 per run · 200 calls per batch"), or "" when there are none."""

        def part(calls: int, tokens: int, cost: float, scope: str) -> str:
            words = [f"{calls:,} calls" if calls else "", f"{tokens:,} tokens" if tokens else "", f"{cost:g} spent" if cost else ""]
            shown = ", ".join(w for w in words if w)
            return f"{shown} per {scope}" if shown else ""

        parts = [
            part(self.max_calls, self.max_tokens, self.max_cost, "run"),
            part(self.batch_max_calls, self.batch_max_tokens, self.batch_max_cost, "batch"),
        ]
        return " · ".join(p for p in parts if p)

    @property
    def limits_run(self) -> bool:
        return bool(self.max_calls or self.max_tokens or self.max_cost)

    @property
    def limits_batch(self) -> bool:
        return bool(self.batch_max_calls or self.batch_max_tokens or self.batch_max_cost)


def parse_prices(value: Any) -> dict[str, float]:
    """``"gpt-4o=0.01, gpt-4o-mini=0.0006"`` (or a list of such pairs) as {model: price}; raises ValueError saying which pair is wrong."""
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value or []]
    prices: dict[str, float] = {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        model, sep, price = item.rpartition("=")
        try:
            amount = float(price)
        except ValueError:
            amount = -1.0
        if not sep or not model.strip() or not 0 <= amount < 1e6:
            raise ValueError(f"{item!r} is not model=price (a model name, '=', and a price of 0 or more), e.g. gpt-4o-mini=0.0006")
        prices[model.strip()] = amount
    return prices


class BeliefConfig(BaseModel):
    """What every protocol adds to its debate: the judge's belief after each round, a ruling on the evidence beside its own, desk's exhibits to start from, and whether to debate when they settle the claim."""

    per_round: bool = Field(
        default=True,
        title="Belief after each round",
        description="After each round (desk: before and after its debate; mermaid: after each search step and at its answer; single: at the end), the judge's probabilities of supported, refuted and not enough info given the debate so far, read from its answer letters in 2 option orders (2 short calls a round).",
    )
    desk_weighed: bool = Field(
        default=True,
        title="desk's belief: its weighed exhibits",
        description="desk's belief before and after its debate is its calibrated weighing of its exhibits (each stance read on its own; no extra call) where the model has a calibration; off: the judge is asked over the exhibits at once, as every debate's belief is (the embedded model's answer told supported from refuted claims no better than chance that way).",
    )
    debate_reader: Literal["letters", "weighed"] = Field(
        default="weighed",
        title="A debate's belief",
        description="weighed (a debate grounded in desk's exhibits, on a model with a calibration; else letters): the evidence weighed as desk weighs its exhibits, those a round cites read again with the arguments made about them (at most 'Items read again' a round, 2 calls each with desk's contrast question); letters: after each round the judge is asked over the evidence and the debate so far, and its answer letters read (the embedded model's answer told supported from refuted claims no better than chance that way).",
    )
    reread: int = Field(
        default=3,
        ge=1,
        le=10,
        title="Items read again",
        description="With a weighed debate belief: most evidence items read after a round (those its turns cite first, then evidence never read).",
    )
    reread_with: Literal["citing", "every side"] = Field(
        default="citing",
        title="Read again with",
        description=(
            "With a weighed debate belief, the arguments an item cited in a round is read again with: citing, the arguments "
            "that cite it; every side, each debater's argument of the round beside them, as desk reads a contested exhibit "
            "(on 8 train debates it moved the belief in 3, each time further towards the debaters' label, the wrong way twice: "
            "docs/measurements/2026-11-27-belief-reread.md)."
        ),
    )
    evidence: int = Field(
        default=6,
        ge=0,
        le=20,
        title="Evidence the belief reads",
        description="Most evidence items in the belief prompt: those the debaters cited first, then the rest in the order they were found.",
    )
    evidence_chars: int = Field(
        default=400,
        ge=100,
        le=2000,
        title="Characters per evidence item",
        description="Each evidence item is cut here in the belief prompt.",
    )
    turn_chars: int = Field(
        default=600, ge=100, le=3000, title="Characters per turn", description="Each debate turn is cut here in the belief prompt."
    )
    verdict: Literal["calibrated", "published"] = Field(
        default="calibrated",
        title="Whose ruling is the verdict",
        description="calibrated: where the judge's model has a desk calibration, the run's verdict is desk's calibrated reading of the evidence the debate gathered, and the protocol's own ruling (judge, panel, summarizer) is kept and shown beside it; published: the protocol's own ruling, with the calibrated one shown beside it.",
    )
    calibrated_ruling: bool = Field(
        default=True,
        title="Rule on the evidence too",
        description="Where the judge's model has a desk calibration, read the stances of the evidence the debate gathered (desk's contrast question, 2 calls an item) and give the calibrated ruling beside the protocol's own.",
    )
    ruling_evidence: int = Field(
        default=12,
        ge=1,
        le=30,
        title="Evidence the calibrated ruling reads",
        description="Most evidence items whose stances the calibrated ruling reads: those the debaters cited first, then the rest in the order they were found.",
    )
    grounded: Literal["auto", "on", "off"] = Field(
        default="auto",
        title="Debate from desk's exhibits",
        description="on: a debate starts from desk's exhibits and their stances (the same search and readings desk shows), so the arguments cite exhibits the checker has already seen ranked; auto: on for the embedded model, off for others; off: each protocol searches as published.",
    )
    debate_when: Literal["contested", "always"] = Field(
        default="contested",
        title="When to debate",
        description=(
            "For a debate that starts from desk's exhibits. contested: the debate runs only where it can change something, "
            "otherwise the verdict is the exhibits' calibrated reading and the run page offers the debate. It is not run when "
            "the exhibits settle the claim (the judge's model has a calibration fitted for this reading and measured on the "
            "corpus searched, every exhibit read came from it, no strong exhibits point both ways, and the reading says SUPPORTS "
            "or REFUTES at 'Settled at' or above, at the worse end of the bound when exhibits were left unread), nor when the "
            "verdict would be that calibrated reading anyway ('Whose ruling is the verdict' calibrated) and no strong exhibits "
            "point both ways: a debate changes that reading only by reading contested exhibits again, so it could not change "
            "the verdict (on Check-COVID dev, 159 of 160 claims: docs/measurements/2026-12-03-debate-skip.md). always: the "
            "debate runs whatever the exhibits say (a classroom's choice)."
        ),
    )
    settled_at: float = Field(
        default=0.9,
        ge=0.5,
        le=1.0,
        title="Settled at",
        description="With 'When to debate' contested: the least calibrated confidence at which desk's exhibits settle a claim without a debate.",
    )


class RunConfig(BaseSettings):
    """Everything one run depends on. Snapshotted into the run record (without secrets)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore")

    protocol: str = Field(default="", title="Protocol", description="The debate method to run.")  # default: the registry's (below)
    corpus: str = Field(default="demo", title="Corpus", description="Local evidence corpus to search.")
    debater: ModelSpec = Field(default_factory=ModelSpec, title="Debater model", description="The model that argues.")
    judge: ModelSpec = Field(default_factory=ModelSpec, title="Judge model", description="The model that rules.")
    scorer: ModelSpec = Field(default_factory=ModelSpec, title="Scorer model", description="The model that scores answers and evidence.")
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig, title="Retrieval", description="How evidence is found.")
    pauses: PauseConfig = Field(
        default_factory=PauseConfig,
        title="Pauses",
        description="Step mode's pauses for the checker.",
    )
    budget: BudgetConfig = Field(
        default_factory=BudgetConfig, title="Spend limits", description="Most calls, tokens or money a run or a batch may spend."
    )
    belief: BeliefConfig = Field(
        default_factory=BeliefConfig,
        title="Belief and rulings",
        description="The judge's belief after each round, the calibrated ruling beside the protocol's own, debates grounded in desk's exhibits.",
    )
    # then one section per registered protocol, its settings class named after it (composed below, from the registry)

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...  # a protocol's section: ``config.toolmad.rounds``

    def with_backend(self, backend: str, model: str = "") -> RunConfig:
        """The same config with every role on one backend (the CLI's --backend)."""
        update: dict[str, Any] = {"backend": backend}
        if model:
            update["model"] = model
        return self.model_copy(update={role: getattr(self, role).model_copy(update=update) for role in ROLES})

    def with_overrides(
        self, *, protocol: str | None = None, corpus: str | None = None, backend: str | None = None, model: str = "", no_web: bool = False
    ) -> RunConfig:
        """The same config with the command line's choices applied (unset ones keep the config's)."""
        config = self
        if protocol:
            config = config.model_copy(update={"protocol": protocol})
        if corpus:
            config = config.model_copy(update={"corpus": corpus})
        if backend:
            config = config.with_backend(backend, model)
        if no_web:
            config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"web_search": False})})
        return config

    def role(self, name: str) -> ModelSpec:
        spec = getattr(self, name)
        assert isinstance(spec, ModelSpec)
        return spec

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy for the run record: API keys are dropped, not masked; base URLs lose their credentials."""
        data = self.model_dump(mode="json")
        for role in ROLES:
            data[role].pop("api_key", None)
        return _scrub_base_urls(data)

    def secrets(self) -> list[str]:
        """Every API key this run could use (its own and the environment's) and every credential in a base URL."""
        keys = [self.role(role).api_key.get_secret_value() for role in ROLES] + [openai_env()[1]]
        urls = [openai_env()[0], *_base_urls(self.model_dump(mode="json"))]
        keys += [secret for url in urls for secret in url_secrets(url)]
        return sorted({k for k in keys if len(k) >= 4}, key=len, reverse=True)

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> RunConfig:
        """Rebuild a config from a run record (keys come from the environment again)."""
        return cls.model_validate(data)


ROLES: tuple[Literal["debater", "judge", "scorer"], ...] = ("debater", "judge", "scorer")


def compose_run_config() -> type[RunConfig]:
    """``RunConfig`` with a section per registered protocol (pipelines/protocols/base.py), named after it, in the registry's
    order, and the default protocol the one whose declaration says so: the sidebar, the CLI and docs/options.md read these.
    Done once at import; a test that registers a protocol composes it again."""
    from pipelines.protocols.base import discover

    base = _COMMON

    declared = discover()
    default = next((name for name, p in declared.items() if p.default), next(iter(declared), ""))
    protocol = base.model_fields["protocol"]
    fields: dict[str, Any] = {"protocol": (str, Field(default=default, title=protocol.title, description=protocol.description))}
    for name, p in declared.items():
        if p.settings is not None:
            fields[name] = (p.settings.model, Field(default_factory=p.settings.model, title=name, description=p.settings.description))
    return create_model("RunConfig", __base__=base, __module__=__name__, __doc__=base.__doc__, **fields)


_COMMON = RunConfig  # the settings every run has, before the protocols' sections are added
if not TYPE_CHECKING:
    RunConfig = compose_run_config()


def _base_urls(data: Any) -> list[str]:
    """Every ``*base_url`` value in a dumped config (the roles' and the panel judges')."""
    if not isinstance(data, dict):
        return []
    found = [v for k, v in data.items() if k.endswith("base_url") and isinstance(v, str) and v]
    return found + [u for v in data.values() for u in _base_urls(v)]


def _scrub_base_urls(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    return {k: scrub_url(v) if k.endswith("base_url") and isinstance(v, str) else _scrub_base_urls(v) for k, v in data.items()}


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
    llama_threads: int = Field(
        default=0,
        ge=0,
        le=256,
        title="Embedded model threads",
        description="Threads of the embedded model's llama.cpp server; 0 means one per physical core (llama.cpp's own default). On a quiet 2-core machine 2 threads ran a debate 1.7x faster than 1 (bench/llama_threads.py); on a machine busy with other work, set 1: llama.cpp's threads wait for each other, and one stalled core stalls them all. A running server keeps its threads until `python -m pipelines model stop`.",
    )
    embeddings: Literal["onnx", "torch"] = Field(
        default="onnx",
        title="Embeddings runtime",
        description="What runs MiniLM (search and ingestion): onnx, ONNX Runtime on the same weights exported once to the model cache (about twice as fast here; the same vectors to 1e-6), or torch, sentence-transformers as before. onnx falls back to torch when the export cannot be made.",
    )
    passage_precision: Literal["int8", "float32"] = Field(
        default="int8",
        title="Passage embedding precision",
        description="The weights MiniLM on ONNX Runtime embeds ingested passages with: int8 (its matrix weights quantized once, one scale per output channel: about 2.3x the float rate, search recall on Check-COVID within 0.01 of float's) or float32 (the same weights as queries). Queries and every similarity outside the index stay float32; torch embeds everything in float32.",
    )
    llama_slots: int = Field(
        default=0,
        ge=0,
        le=64,
        title="Embedded model slots",
        description="Calls the embedded model's native llama.cpp server decodes together (continuous batching); 0 means 1 on up to 2 threads (on 2 cores, 4 together gave only 1.07x the tokens per second and batched answers differ from one-at-a-time ones), else one per thread, at most 4. Each slot has the whole context (about 28 KB of memory per token). The Python server has one. A running server keeps its slots until `python -m pipelines model stop`.",
    )
    max_record_mb: float = Field(
        default=20.0,
        gt=0,
        title="Largest record file checked (MB)",
        description="`python -m pipelines verify-record` refuses a larger file before reading it (a record of a long debate is well under 5 MB; a 46 MB file once took 36 s to check).",
    )
    llama_cache_ram: int = Field(
        default=LLAMA_CACHE_RAM_MIB,
        ge=-1,
        title="Embedded model's prompt cache (MiB)",
        description="Host memory llama-server may keep earlier prompts in, to read a prompt that shares their start without computing it again (its --cache-ram); 0 keeps none, -1 sets no limit. llama.cpp's own default, 8192, let the server grow from 2.2 GB to 10.8 GB over 125 claims; 512 was as fast on 20 dev claims and held it at 2.6 GB. A running server keeps its cache size until `python -m pipelines model stop`.",
    )
    llama_server: str = Field(
        default="",
        title="Embedded model server",
        description="Which llama.cpp server runs the embedded model: empty for llama.cpp's own llama-server that `make model` builds (build/llama.cpp/bin; where it is missing, the Python server), `python` for the Python server (llama-cpp-python's, one call at a time), or the path of another llama-server build.",
    )
    public_url: str = Field(
        default="",
        title="Public URL of reports",
        description="Where published reports live (e.g. https://desk.example.org/runs); a ClaimReview's url is this plus the run id.",
    )
    organisation: str = Field(
        default="",
        max_length=200,
        title="Organisation",
        description="The newsroom that publishes the desk's fact-checks: the publisher and an author (with the editor) of every "
        "ClaimReview published from the claims queue. Publishing asks for it when it is empty.",
    )
    users_file: Path | None = Field(
        default=None,
        title="Sign-in users file",
        description="A TOML file of the desk's users (name, role editor or checker, bcrypt password hash; see pipelines/newsroom/access/users.py). "
        "Set, every page asks to sign in and actions carry the signed-in name; unset (the default), nobody signs in.",
    )
    session_hours: float = Field(
        default=12.0,
        gt=0,
        le=24 * 90,
        title="Sign-in lasts",
        description="Hours a users-file sign-in lasts (across reloads and new tabs) unless the person signs out first.",
    )
    open_desk: bool = Field(
        default=False,
        title="Open desk",
        description="Allow the app to listen on an address other than 127.0.0.1 with nobody signing in: anyone who reaches the "
        "port can then run claims, spend and override verdicts, and every page says so. Off (the default), such an app refuses to "
        "serve until sign-in is configured or it listens on 127.0.0.1.",
    )
    oidc_editors: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="OIDC editors",
        description="With an [auth] section in .streamlit/secrets.toml (sign-in through an OpenID Connect provider with st.login): "
        "comma-separated e-mail addresses, or @domain for a whole domain, that sign in as editors.",
    )
    oidc_checkers: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        title="OIDC checkers",
        description="As OIDC editors, for the checker role. Anyone the provider knows but neither list names is refused.",
    )

    @field_validator("oidc_editors", "oidc_checkers", mode="before")
    @classmethod
    def _addresses(cls, value: Any) -> list[str]:
        items = value.split(",") if isinstance(value, str) else [str(v) for v in value or []]
        return [i.strip().lower() for i in items if i.strip()]

    checkcovid_dir: Path = Field(
        default=Path("../shared/data/check-covid"),
        title="Check-COVID folder",
        description="Path to the Check-COVID dataset (corpus.json and the claim files).",
    )
    match_suggest: float = Field(
        default=0.65,
        gt=0,
        le=1,
        title="Seen before: offer from",
        description="A claim added to the queue is offered the earlier fact-checks (the desk's reviewed claims, imported ClaimReviews) that score at least this alike (docs/queue.md#seen-before; chosen on paraphrased PolitiFact claims).",
    )
    match_join: float = Field(
        default=0.85,
        gt=0,
        le=1,
        title="Seen before: join from",
        description="At or above this similarity a new claim is joined to the earlier fact-check it repeats: its verdict shown as a proposal, never as this desk's rating. Not below the offer threshold.",
    )
    webhook_url: str = Field(
        default="",
        title="Webhook",
        description="An http(s) address the desk POSTs every claims-queue change to (JSON, signed with the desk's ed25519 key in X-DebateDesk-Signature), for its chat tool; empty sends nothing.",
    )
    batch_on_workers: bool = Field(
        default=False,
        title="Batches on workers",
        description="On a shared desk (DEBATEDESK_DATABASE_URL on PostgreSQL): the Batch page and the claims queue's Check these submit "
        "their claims to the desk's queue in that database and show their progress, and `python -m pipelines worker` processes run them "
        "(docs/scale.md); closing the tab or restarting the app loses nothing, and each model endpoint stays within its Parallel calls "
        "across the app and every worker. Off (the default), or on SQLite, the Batch page runs a batch in the app as before.",
    )
    fake_latency_s: float = Field(
        default=0.0,
        ge=0,
        le=10,
        title="Fake backend's delay",
        description="Seconds the fake backend waits before each answer (0: instant). For demos and browser tests that watch a run as it goes, "
        "and for bench/workers.py: a latency-bound load, as a remote model server gives, to measure workers on.",
    )

    @property
    def sqlite_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'runs.sqlite').resolve()}"


def openai_env() -> tuple[str, str]:
    """The OpenAI base URL and key from the environment (the fallback for empty fields)."""
    return os.environ.get("OPENAI_BASE_URL", ""), os.environ.get("OPENAI_API_KEY", "")


class ConfigError(DebateDeskError):
    """A setting (typed on a page or in a ``DEBATEDESK_*`` variable) is out of its range or malformed; says which and why."""


def load_run_config() -> RunConfig:
    """The run settings of the environment; a bad ``DEBATEDESK_*`` value is a ConfigError naming the variable and its range."""
    try:
        return RunConfig()
    except ValidationError as exc:
        raise ConfigError(f"a setting in the environment is not valid: {describe_invalid(exc, RunConfig, env=True)}") from exc


def describe_invalid(exc: ValidationError, root: type[BaseModel], *, env: bool = False) -> str:
    """Each invalid setting in plain words: its title (and variable, with ``env``), what it must be, and what was given.

    ``Calls per run (DEBATEDESK_BUDGET__MAX_CALLS) must be a whole number from 0 to 100,000; got '-3'``; no pydantic text.
    """
    return "; ".join(_plain_problem(error, root, env=env) for error in exc.errors())


def _plain_problem(error: Any, root: type[BaseModel], *, env: bool) -> str:
    path = [str(p) for p in error["loc"]]
    field, model = None, root
    for part in path:
        info = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if info is None:
            break
        field = info
        annotation = info.annotation
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None  # type: ignore[assignment]
    title = field.title if field is not None and field.title else ".".join(path) or "a setting"
    where = f" ({ENV_PREFIX}{'__'.join(path).upper()})" if env and path else f" ({'.'.join(path)})" if path else ""
    given = error.get("input")
    got = f"; got {str(given)[:40]!r}" if given is not None and not isinstance(given, dict) else ""
    allowed = _allowed(field) if field is not None else None
    if allowed is None:  # our own validators' messages (a price list) say what is wrong already
        return f"{title}{where}: {str(error['msg']).removeprefix('Value error, ')}{got}"
    return f"{title}{where} must be {allowed}{got}"


def _allowed(field: Any) -> str | None:
    bounds = {type(m).__name__: m for m in field.metadata}
    low = getattr(bounds.get("Ge"), "ge", None)
    high = getattr(bounds.get("Le"), "le", None)
    above = getattr(bounds.get("Gt"), "gt", None)
    kind = {int: "a whole number", float: "a number", bool: "true or false"}.get(field.annotation, "")
    if not kind:
        if typing.get_origin(field.annotation) is Literal:
            return "one of " + ", ".join(str(a) for a in typing.get_args(field.annotation))
        return None
    if low is not None and high is not None:
        return f"{kind} from {_number(low)} to {_number(high)}"
    if above is not None and high is not None:
        return f"{kind} above {_number(above)} and at most {_number(high)}"
    if low is not None:
        return f"{kind} of at least {_number(low)}"
    return kind


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"
