"""A run's wiring: the model for each role, and the evidence tools as an explicit, ordered list of layers.

``execute`` (runner.py) asks for both and then only runs the protocol. The tools start as the services'
(the corpus index, the web search under the run's source policy, the evidence memory); each layer in
``tool_layers`` wraps what the one before it gave, in that order:

1. ``frozen``: a re-run of a stored run answers every search from that run's evidence (no memory of other claims);
2. ``journal``: every search result is recorded, and a resumed run's are served back; the source policy stays the
   outer layer, so the retrieval stage still reports what it refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from pipelines.core.config import ROLES, ModelSpec, RunConfig
from pipelines.core.events import Event, StageCompleted, StageStarted
from pipelines.record.journal import Journal, JournalCache, JournaledIndex, JournaledWeb, JournalFirstCache
from pipelines.run.context import Toolbox
from pipelines.run.llm.cache import caches
from pipelines.run.llm.client import LLM
from pipelines.run.llm.embedded import server as embedded_server
from pipelines.run.llm.limits import Budget
from pipelines.run.llm.registry import get_backend
from pipelines.run.server_restart import ServerRestarts
from pipelines.run.services import Services
from pipelines.run.tools.frozen import FrozenEvidence, FrozenIndex, FrozenWeb
from pipelines.run.tools.web import PolicyFilteredSearch, filtered, source_policy


class Models:
    """Builds the model for a role (a panel judge's seat too): the services' chat model for the spec, with the run's
    limiter, response cache behind the journal, budget, accounting events and, for a server the run started, restarts."""

    def __init__(self, services: Services, emit: Callable[[Event], None], *, journal: Journal | None, budget: Budget | None) -> None:
        self.services = services
        self.emit = emit
        self.journal_cache = JournalCache(journal) if journal is not None else None
        self.budget = budget
        self.restarts = ServerRestarts(services, emit)
        self.announced: set[str] = set()

    async def __call__(self, role: str, spec: ModelSpec) -> LLM:
        services, emit = self.services, self.emit
        backend = get_backend(spec.backend)
        announce = backend.name == "embedded" and not self.announced
        if announce:
            emit(StageStarted(stage="model", detail=_starting_detail(services)))
        # Building a model can take long (the embedded server starts), so off the loop; one built before is at hand.
        chat = services.built_chat_model(spec)
        if chat is None:
            chat = await asyncio.to_thread(services.chat_model, spec)
        if announce:
            emit(StageCompleted(stage="model"))
            self.announced.add(backend.name)
        return LLM(
            chat,
            role=role,
            model_name=spec.model or backend.default_model or backend.name,
            max_retries=spec.max_retries,
            limiter=services.limiters.get(
                f"{spec.backend}|{spec.base_url}", backend.parallel_calls(chat, services.settings, spec.concurrency)
            ),
            on_call=emit,
            cache=JournalFirstCache.over(self.journal_cache, services.response_cache if caches(spec) else None),
            params={"temperature": spec.temperature, "max_tokens": spec.max_tokens, "base_url": spec.base_url},
            budget=self.budget,
            # A local server the run started can be started again when it dies mid-run; a remote endpoint cannot.
            reconnect=self.restarts.hook(role, spec) if backend.still_serves is not None else None,
        )

    async def for_roles(self, config: RunConfig, wanted: Collection[str]) -> dict[str, LLM]:
        """One model per role; the roles that want token probabilities (``wanted``) first, so the embedded server they
        start (with logits_all) also serves the other roles, instead of a second server beside it."""
        specs = {role: probability_spec(config.role(role)) if role in wanted else config.role(role) for role in ROLES}
        llms: dict[str, LLM] = {}
        for role in sorted(ROLES, key=lambda r: not specs[r].logprobs):
            llms[role] = await self(role, specs[role])
        return llms


def probability_spec(spec: ModelSpec) -> ModelSpec:
    """A role whose answers are read from token probabilities: on the embedded backend its server must keep them (logits_all)."""
    return spec.model_copy(update={"logprobs": True}) if spec.backend == "embedded" else spec


ToolLayer = Callable[[Toolbox], Toolbox]


@dataclass(frozen=True)
class Frozen:
    """A re-run: the stored run's evidence is all there is (no search, no memory of other claims)."""

    evidence: FrozenEvidence
    config: RunConfig

    def __call__(self, tools: Toolbox) -> Toolbox:
        web = filtered(FrozenWeb(self.evidence), source_policy(self.config.retrieval))
        return replace(tools, index=FrozenIndex(self.evidence, tools.embedder), web=web, memory=None)


@dataclass(frozen=True)
class Journaled:
    """The journal keeps what the search engine returned; the run's source policy stays the outer layer."""

    journal: Journal
    config: RunConfig

    def __call__(self, tools: Toolbox) -> Toolbox:
        raw_web = tools.web.inner if isinstance(tools.web, PolicyFilteredSearch) else tools.web
        web = filtered(JournaledWeb(raw_web, self.journal), source_policy(self.config.retrieval))
        return replace(tools, index=JournaledIndex(tools.index, self.journal), web=web)


def tool_layers(config: RunConfig, *, frozen: FrozenEvidence | None, journal: Journal | None) -> list[ToolLayer]:
    """The layers this run's tools pass through, innermost first."""
    layers: list[ToolLayer] = []
    if frozen is not None:
        layers.append(Frozen(frozen, config))
    if journal is not None:
        layers.append(Journaled(journal, config))
    return layers


def wire_tools(services: Services, config: RunConfig, layers: list[ToolLayer]) -> Toolbox:
    """The services' tools for this run, wrapped by each layer in turn."""
    tools = Toolbox(index=services.index, web=services.web_search(config), embedder=services.embedder, memory=services.memory)
    for layer in layers:
        tools = layer(tools)
    return tools


def _starting_detail(services: Services) -> str:
    """What the run page says while the embedded model starts: on a first `make run`, that llama-server is still being built."""
    if not services.settings.llama_server and embedded_server.build_in_progress():
        return (
            "waiting for llama.cpp's server, which the first `make run` is still compiling in the background "
            "(a few minutes; log: build/llama.cpp/build-server.log), then starting the embedded model"
        )
    return "starting the embedded model (the first start takes a while)"
