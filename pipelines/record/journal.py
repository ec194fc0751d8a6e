"""The run journal: every model answer and tool result, so an interrupted run resumes where it stopped.

Resuming re-runs the protocol from the start with the journal answering every call it had
already made (instantly, no network) and going live at the first call it had not. The
events the replay emits again are matched against the stored record by content (not by
position, so concurrent ``asyncio.gather`` branches may interleave differently) and only
the new ones are stored: the finished record has every event once, in order.

Keys are (model, prompt, parameters) for model calls and (corpus, query, k) or (query, k)
for searches; the n-th call with a key gets the n-th recorded answer, so a retried
malformed answer replays as it happened.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from corpora.base import Passage
from pipelines.core.errors import ToolUnavailableError
from pipelines.core.events import (
    ArgumentDelta,
    CheckerAddedEvidence,
    Event,
    EvidenceRetrieved,
    ModelCallCompleted,
    ModelServerRestarted,
    RunFailed,
    RunInterrupted,
    RunResumed,
    RunStarted,
    dump_event,
)
from pipelines.core.text.streamed import StreamedAgain
from pipelines.record.store import RunStore
from pipelines.run.llm.client import ResponseCache
from pipelines.run.tools.corpus_index import CorpusIndex, Hit, IngestReport, SearchMode
from pipelines.run.tools.embeddings import Embedder
from pipelines.run.tools.web import WebResult, WebSearch
from pipelines.stages.retrieval import evidence_key

# Events that mark what happened to the run itself: never matched against earlier ones.
_LIFECYCLE = (RunStarted, RunResumed, RunFailed, RunInterrupted, ModelServerRestarted)


class JournalSink(Protocol):
    """Where new journal entries go: the run store, or the runner's writer thread in front of it."""

    def journal_put(self, run_id: str, kind: str, key: str, payload: str) -> None: ...


class Journal:
    """Recorded answers by (kind, key), served in order on replay; new answers are stored as they come."""

    def __init__(self, store: JournalSink | None, run_id: str, recorded: dict[tuple[str, str], list[str]] | None = None) -> None:
        self._store = store
        self._run_id = run_id
        self._answers: dict[tuple[str, str], list[str]] = {k: list(v) for k, v in (recorded or {}).items()}
        self._served: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self.replayed = 0
        self.redact: Callable[[str], str] = lambda text: text  # the runner sets one that removes API keys

    @classmethod
    def load(cls, store: RunStore, run_id: str) -> Journal:
        return cls(store, run_id, store.journal(run_id))

    def take(self, kind: str, key: str) -> str | None:
        """The next recorded answer for this call, or None when the run has not been this far."""
        with self._lock:
            answers = self._answers.get((kind, key), [])
            n = self._served[(kind, key)]
            if n >= len(answers):
                return None
            self._served[(kind, key)] += 1
            self.replayed += 1
            return answers[n]

    def record(self, kind: str, key: str, payload: str) -> None:
        payload = self.redact(payload)
        with self._lock:
            self._answers.setdefault((kind, key), []).append(payload)
            self._served[(kind, key)] += 1
        if self._store is not None:
            self._store.journal_put(self._run_id, kind, key, payload)


class JournalCache:
    """The LLM client's ResponseCache hook backed by the journal (no ``delete``: a malformed answer is replayed too)."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def get(self, key: str) -> str | None:
        return self._journal.take("llm", key)

    def put(self, key: str, text: str) -> None:
        self._journal.record("llm", key, text)

    def delete(self, key: str) -> None:
        """Nothing to forget: the journal keeps every answer in order, malformed ones too, so a resume replays the retries."""


class JournalFirstCache:
    """A run's response cache: its journal first (a resumed run is told what it was told before), then the shared cache.

    Every answer, fresh or from the shared cache, goes into the journal, so a resume replays it.
    """

    def __init__(self, journal: JournalCache, shared: ResponseCache) -> None:
        self._journal = journal
        self._shared = shared

    @staticmethod
    def over(journal: JournalCache | None, shared: ResponseCache | None) -> ResponseCache | None:
        if journal is None or shared is None:
            return journal if journal is not None else shared
        return JournalFirstCache(journal, shared)

    def get(self, key: str) -> str | None:
        text = self._journal.get(key)
        if text is None:
            text = self._shared.get(key)
            if text is not None:
                self._journal.put(key, text)
        return text

    def put(self, key: str, text: str) -> None:
        self._journal.put(key, text)
        self._shared.put(key, text)

    def delete(self, key: str) -> None:
        self._shared.delete(key)


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class JournaledIndex(CorpusIndex):
    """The corpus index with every search result journalled (a resumed run sees what the first attempt saw)."""

    def __init__(self, inner: CorpusIndex, journal: Journal) -> None:  # no super().__init__: every call goes to ``inner``
        self._inner = inner
        self._journal = journal

    @property
    def embedder(self) -> Embedder:
        return self._inner.embedder

    def corpora(self) -> dict[str, dict[str, int]]:
        return self._inner.corpora()

    def has(self, corpus: str) -> bool:
        return self._inner.has(corpus)

    def count(self, corpus: str) -> int:
        return self._inner.count(corpus)

    def ingest(
        self, corpus: str, passages: Iterable[Passage], batch_size: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> IngestReport:
        return self._inner.ingest(corpus, passages, batch_size, progress)

    def delete(self, corpus: str) -> None:
        self._inner.delete(corpus)

    def lexical_path(self, corpus: str) -> Path:
        return self._inner.lexical_path(corpus)

    def document(self, corpus: str, doc_id: str) -> list[Passage]:
        key = _key("document", corpus, doc_id)
        recorded = self._journal.take("corpus", key)
        if recorded is not None:
            return [Passage(**{**d, "sentence_indices": tuple(d["sentence_indices"])}) for d in json.loads(recorded)]
        passages = self._inner.document(corpus, doc_id)
        self._journal.record("corpus", key, json.dumps([asdict(p) for p in passages]))
        return passages

    def search(self, corpus: str, query: str | Sequence[str], k: int = 3, mode: SearchMode = "hybrid") -> list[Hit]:
        key = _key("corpus", corpus, query if isinstance(query, str) else list(query), k, mode)
        recorded = self._journal.take("corpus", key)
        if recorded is not None:
            return [_hit_from(d) for d in json.loads(recorded)]
        hits = self._inner.search(corpus, query, k, mode)
        self._journal.record(
            "corpus", key, json.dumps([{"passage": asdict(h.passage), "score": h.score, "scores": h.scores} for h in hits])
        )
        return hits


def _hit_from(data: dict[str, Any]) -> Hit:
    passage = dict(data["passage"])
    passage["sentence_indices"] = tuple(passage.get("sentence_indices", ()))
    return Hit(passage=Passage(**passage), score=float(data["score"]), scores={k: float(v) for k, v in data["scores"].items()})


class JournaledWeb:
    """Web search with every result (and every 'unavailable') journalled: a stored run replays with no network."""

    def __init__(self, inner: WebSearch, journal: Journal) -> None:
        self._inner = inner
        self._journal = journal
        self.name = inner.name

    def search(self, query: str, k: int) -> list[WebResult]:
        key = _key("web", self._inner.name, query, k)
        recorded = self._journal.take("web", key)
        if recorded is not None:
            data = json.loads(recorded)
            if "unavailable" in data:
                raise ToolUnavailableError(data["unavailable"])
            return [WebResult(**r) for r in data["results"]]
        try:
            results = self._inner.search(query, k)
        except ToolUnavailableError as exc:
            self._journal.record("web", key, json.dumps({"unavailable": str(exc)}))
            raise
        self._journal.record("web", key, json.dumps({"results": [asdict(r) for r in results]}))
        return results


def fingerprint(evt: Event) -> str:
    """What makes two events the same event, whenever it happened (model-call accounting: who and which model)."""
    data = dump_event(evt)
    data.pop("at", None)
    if isinstance(evt, ModelCallCompleted):
        data = {"type": data["type"], "role": evt.role, "model": evt.model}
    elif isinstance(evt, EvidenceRetrieved):
        # An item is retrieved once per run; which concurrent agent found it first may differ on replay.
        data = {"type": data["type"], "id": evt.evidence.id, "key": evidence_key(evt.evidence)}
    return json.dumps(data, sort_keys=True)


class EventDeduper:
    """Lets through only the events a resumed run has not stored yet.

    Whole events are matched as a multiset of fingerprints; streamed argument chunks are
    matched as text per turn (a replayed answer arrives as one chunk, a live re-call in
    chunks of its own), and only the part beyond what was stored goes through.
    """

    def __init__(self, recorded: Iterable[Event]) -> None:
        self._counts: Counter[str] = Counter()
        self._streamed: dict[str, str] = {}
        self._again: dict[str, StreamedAgain] = {}
        for evt in recorded:
            if isinstance(evt, ArgumentDelta):
                self._streamed[evt.turn_id] = self._streamed.get(evt.turn_id, "") + evt.text
            elif not isinstance(evt, _LIFECYCLE):
                self._counts[fingerprint(evt)] += 1
        self.suppressed = 0

    def admit(self, evt: Event) -> Event | None:
        """The event to store (possibly a shortened chunk), or None when the record already has it."""
        if isinstance(evt, _LIFECYCLE):
            return evt
        if isinstance(evt, ArgumentDelta):
            return self._admit_delta(evt)
        if isinstance(evt, ModelCallCompleted) and not evt.cached:
            return evt  # a live call is a new call (and a cost), even if one like it was made before the crash
        fp = fingerprint(evt)
        if self._counts[fp] > 0:
            self._counts[fp] -= 1
            self.suppressed += 1
            return None
        return evt

    def _admit_delta(self, evt: ArgumentDelta) -> ArgumentDelta | None:
        again = self._again.setdefault(evt.turn_id, StreamedAgain(self._streamed.get(evt.turn_id, "")))
        text = again.unseen(evt.text)
        if text is None:
            self.suppressed += 1
            return None
        return evt if text == evt.text else evt.model_copy(update={"text": text})


def reserved_evidence_ids(events: Iterable[Event]) -> dict[str, str]:
    """Evidence key -> the id the first attempt gave it, so a replay numbers items the same way (pasted items included)."""
    reserved: dict[str, str] = {}
    for e in events:
        if isinstance(e, EvidenceRetrieved):
            reserved[evidence_key(e.evidence)] = e.evidence.id
        elif isinstance(e, CheckerAddedEvidence):
            reserved[f"user:{e.evidence.id}"] = e.evidence.id
    return reserved
