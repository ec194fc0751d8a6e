"""The long-lived pieces every run shares: corpus index, embedder, run store, chat models, caches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from corpora.base import CorpusLoader
from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader, DemoLoader
from pipelines.core.config import AppSettings, ModelSpec, RunConfig
from pipelines.core.errors import UnknownCorpusError
from pipelines.record.spill import replay_spills
from pipelines.record.store import RunStore
from pipelines.run.desk_settings import DeskSettings, DeskSettingsBook
from pipelines.run.llm.cache import DiskResponseCache
from pipelines.run.llm.client import ResponseCache
from pipelines.run.llm.limits import Limiters
from pipelines.run.llm.registry import build_chat_model, get_backend
from pipelines.run.tools.corpus_index import CorpusIndex
from pipelines.run.tools.embedding_cache import CachedEmbedder
from pipelines.run.tools.embeddings import Embedder, default_embedder
from pipelines.run.tools.memory import EvidenceMemory
from pipelines.run.tools.web import DdgsSearch, OfflineSearch, WebSearch, filtered, source_policy


@dataclass
class Services:
    """The long-lived pieces a run uses; built once per process (the app caches it)."""

    settings: AppSettings
    index: CorpusIndex
    embedder: Embedder
    store: RunStore | None = None
    web: WebSearch | None = None
    chat_models: dict[str, BaseChatModel] = field(default_factory=dict)
    chat_override: BaseChatModel | None = None  # tests and benchmarks: one given model for every role
    memory: EvidenceMemory | None = None  # evidence kept across claims, in the run store's database
    builtin_corpora: dict[str, Callable[[], CorpusLoader]] = field(default_factory=dict)
    # Shared by every run of the process: one concurrency bound per endpoint, one response cache.
    limiters: Limiters = field(default_factory=Limiters)
    response_cache: ResponseCache | None = None
    spill_problems: list[str] = field(default_factory=list)  # spill files refused or set aside at start, in words (naming each)

    @classmethod
    def create(cls, settings: AppSettings | None = None, *, embedder: Embedder | None = None, with_store: bool = True) -> Services:
        settings = settings or AppSettings()
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        embedder = embedder or default_embedder()
        # Tools and search queries embed through a cache; the index stores its passages' vectors itself.
        cached = CachedEmbedder(embedder, settings.data_dir / "cache" / "embeddings")
        services = cls(
            settings=settings,
            index=CorpusIndex(settings, embedder, query_embedder=cached),
            embedder=cached,
            store=RunStore(settings.sqlite_url) if with_store else None,
            response_cache=DiskResponseCache(settings.data_dir / "cache" / "responses"),
        )
        if services.store is not None:
            # A run's events kept on disk while the store was away; a file refused or set aside is said, never raised.
            services.spill_problems = replay_spills(services.store, settings.data_dir).problems
            # Through the cache too: the claim a memory recall embeds, and the evidence it keeps, were often embedded already.
            services.memory = EvidenceMemory(services.store.engine, cached)
        services.builtin_corpora = {
            "demo": DemoLoader,
            "check-covid": lambda: CheckCovidLoader(settings.checkcovid_dir),
        }
        return services

    def desk_settings(self) -> DeskSettings:
        """The desk's settings as stored now (spend limits, prices, endpoints); the environment's without a run store."""
        if self.store is None:
            return DeskSettings.defaults()
        return DeskSettingsBook(self.store, self.settings.data_dir).load()

    def desk_book(self) -> DeskSettingsBook | None:
        """Where the desk's settings are read and changed (None without a run store)."""
        return DeskSettingsBook(self.store, self.settings.data_dir) if self.store is not None else None

    def corpus_names(self) -> list[str]:
        return sorted(set(self.index.corpora()) | set(self.builtin_corpora))

    def needs_indexing(self, name: str) -> bool:
        """Whether ``name`` is a built-in corpus not yet (or not wholly) indexed: its first use will index it."""
        if name not in self.builtin_corpora:
            return False
        marker = self.settings.data_dir / "indexed" / f"{name}.count"
        return not (marker.is_file() and self.index.count(name) >= int(marker.read_text() or 0) > 0)

    def ensure_corpus(self, name: str, progress: Callable[[int, int], None] | None = None) -> None:
        """A built-in corpus is indexed on first use (and finished if a first indexing was cut short); any other must have been ingested.

        ``progress(done, total)`` hears how far a first indexing has got (the Verify page's bar)."""
        if name not in self.builtin_corpora:
            if self.index.count(name) > 0:
                return
            raise UnknownCorpusError(name, self.corpus_names())
        if not self.needs_indexing(name):
            return
        marker = self.settings.data_dir / "indexed" / f"{name}.count"
        # Ingestion is idempotent: passages already indexed are skipped, the missing ones added.
        self.index.ingest(name, chunk_documents(self.builtin_corpora[name]().load_documents()), progress=progress)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(self.index.count(name)))

    def chat_model(self, spec: ModelSpec) -> BaseChatModel:
        """One chat model per distinct spec (the embedded server is started once, then reused)."""
        built = self.built_chat_model(spec)
        if built is not None:
            return built
        key = self._chat_key(spec)
        if key not in self.chat_models:
            self.chat_models[key] = build_chat_model(spec, self.settings)
        return self.chat_models[key]

    def built_chat_model(self, spec: ModelSpec) -> BaseChatModel | None:
        """The chat model for ``spec`` if it is built already (never starts anything)."""
        if self.chat_override is not None:
            return self.chat_override
        key = self._chat_key(spec)
        chat = self.chat_models.get(key)
        if chat is not None and not get_backend(spec.backend).serves(chat, self.settings):
            # Its server died or was replaced since: forget it, so the next chat_model builds it (and starts a server) again.
            self.chat_models.pop(key, None)
            return None
        return chat

    def stop_unresponsive(self, spec: ModelSpec, chat: BaseChatModel) -> str | None:
        """After a call to ``chat`` timed out: its server stopped if it runs but no longer answers, and why; else None."""
        if self.chat_override is not None:
            return None
        return get_backend(spec.backend).stopped_unresponsive(chat, self.settings)

    @staticmethod
    def _chat_key(spec: ModelSpec) -> str:
        return spec.model_dump_json(exclude={"api_key"}) + str(hash(spec.api_key.get_secret_value()))

    def web_search(self, config: RunConfig) -> WebSearch:
        """The run's web search, behind its source policy (so even a direct call never returns a refused site)."""
        if not config.retrieval.web_search:
            return OfflineSearch()
        return filtered(self.web or DdgsSearch(timeout_s=config.retrieval.web_timeout_s), source_policy(config.retrieval))
