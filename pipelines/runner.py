"""Run a protocol on a claim: validate, wire models and tools, persist and stream every event.

``stream_run`` is the one entry point for the UI, the CLI and tests: it runs the protocol on
a background thread's event loop and yields events as they happen, so a page can render
while the debate goes on.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from corpora.base import CorpusLoader
from corpora.chunking import chunk_documents
from corpora.loaders import CheckCovidLoader, DemoLoader
from pipelines.config import MAX_CLAIM_CHARS, ROLES, AppSettings, ModelSpec, RunConfig
from pipelines.errors import DebateDeskError, InvalidClaimError, UnknownCorpusError
from pipelines.events import Event, ModelCallCompleted, RunFailed, RunStarted, StageCompleted, StageStarted, VerdictReached
from pipelines.llm.client import LLM, CallTally
from pipelines.llm.registry import build_chat_model, get_backend
from pipelines.models import Claim, Verdict
from pipelines.protocols.base import RunContext, Toolbox, get_protocol
from pipelines.store import RunStore
from pipelines.tools.corpus_index import CorpusIndex
from pipelines.tools.embeddings import Embedder, default_embedder
from pipelines.tools.web import DdgsSearch, OfflineSearch, WebSearch, filtered, source_policy

log = logging.getLogger(__name__)
_DONE = object()


def validate_claim(text: str | None, max_chars: int = MAX_CLAIM_CHARS) -> Claim:
    """A claim worth checking: not empty, and short enough to be one claim."""
    cleaned = " ".join((text or "").split())
    if not cleaned:
        raise InvalidClaimError("the claim is empty: type the statement you want checked")
    if len(cleaned) > max_chars:
        raise InvalidClaimError(
            f"the claim is {len(cleaned):,} characters; the limit is {max_chars:,}. Check one claim at a time, "
            "or ingest a long text as a corpus on the Corpora page"
        )
    return Claim(text=cleaned)


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
    builtin_corpora: dict[str, Callable[[], CorpusLoader]] = field(default_factory=dict)

    @classmethod
    def create(cls, settings: AppSettings | None = None, *, embedder: Embedder | None = None, with_store: bool = True) -> Services:
        settings = settings or AppSettings()
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        embedder = embedder or default_embedder()
        services = cls(
            settings=settings,
            index=CorpusIndex(settings, embedder),
            embedder=embedder,
            store=RunStore(settings.sqlite_url) if with_store else None,
        )
        services.builtin_corpora = {
            "demo": DemoLoader,
            "check-covid": lambda: CheckCovidLoader(settings.checkcovid_dir),
        }
        return services

    def corpus_names(self) -> list[str]:
        return sorted(set(self.index.corpora()) | set(self.builtin_corpora))

    def ensure_corpus(self, name: str) -> None:
        """A built-in corpus is indexed on first use; any other must have been ingested."""
        if self.index.count(name) > 0:
            return
        if name not in self.builtin_corpora:
            raise UnknownCorpusError(name, self.corpus_names())
        self.index.ingest(name, chunk_documents(self.builtin_corpora[name]().load_documents()))

    def chat_model(self, spec: ModelSpec) -> BaseChatModel:
        """One chat model per distinct spec (the embedded server is started once, then reused)."""
        if self.chat_override is not None:
            return self.chat_override
        key = spec.model_dump_json(exclude={"api_key"}) + str(hash(spec.api_key.get_secret_value()))
        if key not in self.chat_models:
            self.chat_models[key] = build_chat_model(spec, self.settings)
        return self.chat_models[key]

    def web_search(self, config: RunConfig) -> WebSearch:
        """The run's web search, behind its source policy (so even a direct call never returns a refused site)."""
        if not config.retrieval.web_search:
            return OfflineSearch()
        return filtered(self.web or DdgsSearch(timeout_s=config.retrieval.web_timeout_s), source_policy(config.retrieval))


def preflight(claim_text: str, config: RunConfig, services: Services) -> Claim:
    """Everything that can be checked before a run starts, each with a message that says how to fix it."""
    claim = validate_claim(claim_text)
    check_names(config)
    services.ensure_corpus(config.corpus)
    return claim


def check_names(config: RunConfig) -> None:
    """The protocol and every role's backend exist (raises with the valid names)."""
    get_protocol(config.protocol)
    for role in ROLES:
        get_backend(config.role(role).backend)


async def execute(claim: Claim, config: RunConfig, services: Services, emit: Callable[[Event], None], run_id: str) -> Verdict:
    """Run the configured protocol on a validated claim; every event goes to ``emit``."""
    protocol = get_protocol(config.protocol)
    tally = CallTally()

    def on_call(evt: ModelCallCompleted) -> None:
        tally.add(evt)
        emit(evt)

    limiters: dict[str, asyncio.Semaphore] = {}
    announced: set[str] = set()

    async def make_llm(role: str, spec: ModelSpec) -> LLM:
        backend = get_backend(spec.backend)
        announce = backend.name == "embedded" and not announced
        if announce:
            emit(StageStarted(stage="model", detail="starting the embedded model (the first start takes a while)"))
        chat = await asyncio.to_thread(services.chat_model, spec)
        if announce:
            emit(StageCompleted(stage="model"))
            announced.add(backend.name)
        limiter = limiters.setdefault(f"{spec.backend}|{spec.base_url}", asyncio.Semaphore(spec.concurrency))
        return LLM(
            chat,
            role=role,
            model_name=spec.model or backend.default_model or backend.name,
            max_retries=spec.max_retries,
            limiter=limiter,
            on_call=on_call,
        )

    llms: dict[str, LLM] = {role: await make_llm(role, config.role(role)) for role in ROLES}
    tools = Toolbox(index=services.index, web=services.web_search(config), embedder=services.embedder)
    ctx = RunContext(run_id=run_id, claim=claim, config=config, llms=llms, tools=tools, emit=emit, llm_factory=make_llm)
    verdict = await protocol.run(ctx)
    emit(VerdictReached(verdict=verdict))
    return verdict


def stream_run(claim_text: str, config: RunConfig, services: Services, run_id: str | None = None) -> Iterator[Event]:
    """Yield a run's events as they happen; the run itself goes on in a background thread.

    Bad input (empty or huge claim, unknown corpus, protocol or backend) raises before
    anything starts. Once started, a failure becomes a RunFailed event and what was produced
    so far stays in the store; a bug is re-raised here after its RunFailed event.
    """
    claim = preflight(claim_text, config, services)
    run_id = run_id or uuid.uuid4().hex[:12]
    events: queue.Queue[object] = queue.Queue()
    store = services.store

    def emit(evt: Event) -> None:
        if store is not None:
            store.append(run_id, evt)
        events.put(evt)

    def worker() -> None:
        status = "failed"
        try:
            asyncio.run(execute(claim, config, services, emit, run_id))
            status = "completed"
        except DebateDeskError as exc:
            emit(RunFailed(reason=str(exc)))
        except Exception as exc:  # a bug: record it, then hand it to the caller to raise
            log.exception("run %s crashed", run_id)
            emit(RunFailed(reason=f"internal error (please report): {type(exc).__name__}: {exc}"))
            events.put(exc)
        finally:
            if store is not None:
                store.finish(run_id, status)
            events.put(_DONE)

    if store is not None:
        store.create_run(run_id, claim.text, config.protocol, config.snapshot())
    emit(RunStarted(run_id=run_id, claim=claim.text, protocol=config.protocol, config=config.snapshot()))
    thread = threading.Thread(target=worker, name=f"run-{run_id}", daemon=True)
    thread.start()
    while True:
        item = events.get()
        if item is _DONE:
            break
        if isinstance(item, Exception):
            raise item
        assert isinstance(item, Event)
        yield item
    thread.join()
