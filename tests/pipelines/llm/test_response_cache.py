import asyncio
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
