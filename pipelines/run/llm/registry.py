"""Backends found by name: each builder turns a ModelSpec into a LangChain chat model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import UnknownBackendError

Builder = Callable[[ModelSpec, AppSettings], BaseChatModel]
Liveness = Callable[[BaseChatModel, AppSettings], bool]
Parallel = Callable[[BaseChatModel, AppSettings], int | None]
Unresponsive = Callable[[BaseChatModel, AppSettings], str | None]


@dataclass(frozen=True)
class Backend:
    """A registered backend: how to build it, and what the UI should say about it."""

    name: str
    build: Builder
    description: str
    is_real_model: bool = True
    default_model: str = ""
    cache_by_default: bool = False  # free, local backends: reuse identical calls' answers unless told not to
    # Whether a model built earlier still reaches its backend (a local server may have died or been
    # replaced since); None: a built model stays good for the life of the process.
    still_serves: Liveness | None = None
    # How many calls the model's server answers at once (a local server's slots), or None: no bound
    # of its own. Calls beyond it wait in the app, where no call's timeout runs, not in the server's
    # queue, where a call queued behind a panel's others timed out on a loaded machine.
    answers_at_once: Parallel | None = None
    # After a call timed out: stops the model's server if it runs but no longer answers (hung) and
    # says why, or None (it answers: the call was only slow; or it cannot tell). A stopped server
    # no longer serves, so the run starts another (pipelines/run/server_restart.py).
    stop_if_unresponsive: Unresponsive | None = None

    def serves(self, chat: BaseChatModel, settings: AppSettings) -> bool:
        return self.still_serves is None or self.still_serves(chat, settings)

    def stopped_unresponsive(self, chat: BaseChatModel, settings: AppSettings) -> str | None:
        """Why ``chat``'s server was stopped as hung, or None if it was not."""
        return self.stop_if_unresponsive(chat, settings) if self.stop_if_unresponsive is not None else None

    def parallel_calls(self, chat: BaseChatModel, settings: AppSettings, wanted: int) -> int:
        """``wanted`` (the role's setting) within what the server answers at once."""
        at_once = self.answers_at_once(chat, settings) if self.answers_at_once is not None else None
        return min(wanted, at_once) if at_once else wanted


BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    BACKENDS[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    """The backend called ``name``; an unknown name lists the valid ones."""
    _load_builtin_backends()
    try:
        return BACKENDS[name]
    except KeyError:
        raise UnknownBackendError(name, list(BACKENDS)) from None


def backend_names() -> list[str]:
    _load_builtin_backends()
    return sorted(BACKENDS)


def build_chat_model(spec: ModelSpec, settings: AppSettings) -> BaseChatModel:
    return get_backend(spec.backend).build(spec, settings)


def _load_builtin_backends() -> None:
    # Imported here, not at module top, so a backend's heavy imports are paid only when used.
    if BACKENDS:
        return
    from pipelines.run.llm import embedded, fake, openai_backend

    register_backend(fake.BACKEND)
    register_backend(embedded.BACKEND)
    register_backend(openai_backend.BACKEND)
