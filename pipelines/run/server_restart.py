"""A run's local model server started again when it stops mid-run, and the call it broke asked again.

A llama.cpp server can die under a run (killed, out of memory, replaced by a build). Without
this the run failed ("cannot reach the endpoint") and had to be resumed from History. Now the
first call that loses its connection asks here: if the recorded server no longer runs, a new
one is started (the same model and settings, through ``Services.chat_model``), the run's
record says so (``ModelServerRestarted``, between a "model" stage's start and end), and the
call is asked again; calls already answered are not. Roles whose calls broke at the same time
take the new server quietly. A server that still runs means another fault: nothing is started
and the call fails as before, unless the call timed out and the server no longer answers its
health check (hung: stopped, stuck): then the backend kills it and it is started again as if it
had died. A server that cannot start again fails the run with its reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel

from pipelines.core.config import ModelSpec
from pipelines.core.events import Event, ModelServerRestarted, StageCompleted, StageStarted
from pipelines.run.llm.client import Reconnect, timed_out
from pipelines.run.services import Services

STARTING = "the model server stopped mid-run; starting it again"
STARTING_HUNG = "the model server stopped answering mid-run; starting it again"
STARTED = "started again; the call it broke is asked again"


class ServerRestarts:
    """One per run: hands each role a ``Reconnect`` hook; starts the server again at most once per death."""

    def __init__(self, services: Services, emit: Callable[[Event], None]) -> None:
        self._services = services
        self._emit = emit
        self._lock = asyncio.Lock()
        self._replaced: set[str] = set()  # base URLs of servers that died and were started again

    @property
    def count(self) -> int:
        """How many times this run started its server again."""
        return len(self._replaced)

    def hook(self, role: str, spec: ModelSpec) -> Reconnect:
        async def reconnect(failed: BaseChatModel, exc: Exception) -> BaseChatModel | None:
            return await self._reconnect(role, spec, failed, exc)

        return reconnect

    async def _reconnect(self, role: str, spec: ModelSpec, failed: BaseChatModel, exc: Exception) -> BaseChatModel | None:
        dead = str(getattr(failed, "openai_api_base", "") or "")
        async with self._lock:
            current = self._services.built_chat_model(spec)  # None once its server no longer runs
            hung = None
            if current is failed and timed_out(exc):
                # It runs, but did it hang or was the call only slow? The backend asks it, and stops a hung one.
                hung = await asyncio.to_thread(self._services.stop_unresponsive, spec, failed)
                if hung is not None:
                    current = self._services.built_chat_model(spec)
            if current is not None:
                # Started again for this spec meanwhile, or it never stopped (then the fault is another).
                return current if current is not failed else None
            if dead in self._replaced:  # started again for another role already: take the new one quietly
                return await asyncio.to_thread(self._services.chat_model, spec)
            self._emit(StageStarted(stage="model", detail=STARTING if hung is None else STARTING_HUNG))
            started = time.perf_counter()
            # A server that cannot start raises here, and the run fails with that reason.
            chat = await asyncio.to_thread(self._services.chat_model, spec)
            self._replaced.add(dead)
            reason = ((f"{hung}; " if hung else "") + f"{type(exc).__name__}: {exc}")[:300]
            self._emit(ModelServerRestarted(role=role, reason=reason, seconds=round(time.perf_counter() - started, 2)))
            self._emit(StageCompleted(stage="model", detail=STARTED))
            return chat
