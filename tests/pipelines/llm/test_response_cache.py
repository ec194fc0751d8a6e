import asyncio
import sqlite3
from pathlib import Path

from pydantic import BaseModel

from pipelines.core.config import ModelSpec
from pipelines.core.events import ModelCallCompleted
from pipelines.prompts import load_prompt
from pipelines.run.llm.cache import DiskResponseCache, caches
from pipelines.run.llm.client import LLM
from pipelines.run.llm.fake import FakeChatModel


class Answer(BaseModel):
    label: str


def make(chat: FakeChatModel, cache: DiskResponseCache, calls: list[ModelCallCompleted], params: dict[str, object] | None = None) -> LLM:
    return LLM(chat, role="debater", model_name="fake", cache=cache, on_call=calls.append, params=params or {"temperature": 0.0})


def test_disk_cache_get_put_delete_and_survives_reopening(tmp_path: Path) -> None:
    cache = DiskResponseCache(tmp_path / "responses")
    assert cache.get("k") is None
    cache.put("k", "answer")
    assert cache.get("k") == "answer" and len(cache) == 1
    cache.close()
    again = DiskResponseCache(tmp_path / "responses")
    assert again.get("k") == "answer"
    again.delete("k")
    assert again.get("k") is None


def test_a_repeated_call_comes_from_the_cache_and_is_recorded_as_cached(tmp_path: Path) -> None:
    chat, calls = FakeChatModel(), []
    llm = make(chat, DiskResponseCache(tmp_path), calls)
    messages = load_prompt("single_answer", "pipelines.protocols.single").render(
        claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses."
    )
    deltas: list[str] = []
    first = asyncio.run(llm.stream(messages, deltas.append))
    second = asyncio.run(llm.stream(messages, deltas.append))
    assert first == second and chat.calls == 1
    assert [c.cached for c in calls] == [False, True]
    assert calls[1].tokens_in == 0 and calls[1].seconds == 0.0
    assert asyncio.run(llm.text(messages)) and chat.calls == 2  # not streamed is another call (other parameters)


def test_different_parameters_or_prompts_miss_the_cache(tmp_path: Path) -> None:
    cache, chat, calls = DiskResponseCache(tmp_path), FakeChatModel(), []
    messages = load_prompt("search_queries").render(claim="Masks reduce spread", n=1)
    asyncio.run(make(chat, cache, calls).text(messages))
    asyncio.run(make(chat, cache, calls, {"temperature": 0.7}).text(messages))
    asyncio.run(make(chat, cache, calls).text(load_prompt("search_queries").render(claim="Masks do nothing", n=1)))
    assert chat.calls == 3 and not any(c.cached for c in calls)


def test_a_malformed_structured_answer_is_not_served_again(tmp_path: Path) -> None:
    cache, calls = DiskResponseCache(tmp_path), []
    chat = FakeChatModel(malformed=1)
    messages = load_prompt("search_queries").render(claim="c", n=1)
    result = asyncio.run(make(chat, cache, calls).structured(messages, Answer))
    assert isinstance(result, Answer) and chat.calls == 2
    again = asyncio.run(make(FakeChatModel(), cache, calls).structured(messages, Answer))
    assert again == result and calls[-1].cached


def test_the_cache_is_on_by_default_for_free_local_backends_and_opt_in_for_paid_apis() -> None:
    assert caches(ModelSpec(backend="fake")) and caches(ModelSpec(backend="embedded"))
    assert not caches(ModelSpec(backend="openai"))
    assert caches(ModelSpec(backend="openai", cache="on"))
    assert not caches(ModelSpec(backend="fake", cache="off"))


def test_a_damaged_cache_is_moved_aside_and_a_fresh_one_opened(tmp_path: Path) -> None:
    """A malformed cache.db (a disk or a killed process) once failed every claim of a data folder at Services.create."""
    folder = tmp_path / "responses"
    DiskResponseCache(folder).close()
    (folder / "cache.db").write_bytes(b"SQLite format 3\0" + b"\xff" * 8192)
    cache = DiskResponseCache(folder)
    assert cache.get("k") is None
    cache.put("k", "answer")
    assert cache.get("k") == "answer"
    aside = [p.name for p in tmp_path.iterdir() if p.name.startswith("responses.damaged-")]
    assert len(aside) == 1, "the damaged cache is kept for a look, beside the new one"


class Malformed:
    """What diskcache raises from a database damaged after it was opened."""

    def get(self, *_: object, **__: object) -> object:
        raise sqlite3.DatabaseError("database disk image is malformed")

    set = get


def test_a_cache_damaged_under_a_run_is_a_miss_and_the_call_is_made(tmp_path: Path) -> None:
    cache = DiskResponseCache(tmp_path / "responses")
    cache._cache = Malformed()  # type: ignore[assignment]
    chat, calls = FakeChatModel(), []
    llm = make(chat, cache, calls)
    messages = load_prompt("single_answer", "pipelines.protocols.single").render(claim="Masks reduce spread", evidence="[E1] Masks.")
    assert asyncio.run(llm.text(messages)), "the call is made"
    assert asyncio.run(llm.text(messages)), "and made again: nothing was kept"
    assert cache.failures == 4 and [c.cached for c in calls] == [False, False]
