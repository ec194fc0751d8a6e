import asyncio

import pytest
from pydantic import BaseModel

from pipelines.core.errors import BackendUnavailableError, ModelOutputError
from pipelines.core.events import ModelCallCompleted
from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.run.llm.fake import FakeChatModel


class Answer(BaseModel):
    label: str
    reason: str


def make(chat: FakeChatModel, calls: list[ModelCallCompleted] | None = None, retries: int = 2) -> LLM:
    return LLM(chat, role="judge", model_name="fake", max_retries=retries, on_call=(calls.append if calls is not None else None))


def test_streaming_gives_deltas_that_add_up_and_counts_tokens() -> None:
    calls: list[ModelCallCompleted] = []
    deltas: list[str] = []
    messages = load_prompt("single_answer", "pipelines.protocols.single").render(
        claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses."
    )
    text = asyncio.run(make(FakeChatModel(), calls).stream(messages, deltas.append))
    assert len(deltas) > 1 and "".join(deltas) == text
    assert text.rstrip().endswith("Label: SUPPORTS")
    assert calls[0].tokens_in > 0 and calls[0].tokens_out > 0


def test_malformed_structured_output_is_retried_then_accepted() -> None:
    calls: list[ModelCallCompleted] = []
    result = asyncio.run(make(FakeChatModel(malformed=2), calls).structured(load_prompt("search_queries").render(claim="c", n=1), Answer))
    assert isinstance(result, Answer) and len(calls) == 3


def test_malformed_structured_output_fails_after_retries_with_a_reason() -> None:
    with pytest.raises(ModelOutputError, match="no valid Answer after 2 tries"):
        asyncio.run(make(FakeChatModel(malformed=5), retries=1).structured(load_prompt("search_queries").render(claim="c", n=1), Answer))


class CutOff(FakeChatModel):
    """Malformed answers that stopped at the token limit (finish reason "length"), as a runaway JSON string on llama.cpp."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        result = await super()._agenerate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        if message.content and not str(message.content).rstrip().endswith("}"):  # the fake's malformed answer is cut JSON
            message.response_metadata["finish_reason"] = "length"
        return result


def greedy(chat: FakeChatModel, calls: list[ModelCallCompleted], temperature: float | None) -> LLM:
    return LLM(chat, role="scorer", model_name="fake", max_retries=2, on_call=calls.append, params={"temperature": temperature})


def test_an_answer_cut_at_the_token_limit_is_not_retried_at_temperature_0() -> None:
    calls: list[ModelCallCompleted] = []
    messages = load_prompt("search_queries").render(claim="c", n=1)
    with pytest.raises(ModelOutputError, match=r"after 1 try .*cut off at the token limit"):
        asyncio.run(greedy(CutOff(malformed=5), calls, 0).structured(messages, Answer))
    assert len(calls) == 1, "greedy decoding of the same request would repeat the cut-off answer"


def test_a_cut_answer_is_still_retried_when_sampling_and_a_malformed_one_always() -> None:
    calls: list[ModelCallCompleted] = []
    messages = load_prompt("search_queries").render(claim="c", n=1)
    assert isinstance(asyncio.run(greedy(CutOff(malformed=2), calls, 0.7).structured(messages, Answer)), Answer)
    assert len(calls) == 3
    calls.clear()
    assert isinstance(asyncio.run(greedy(FakeChatModel(malformed=2), calls, 0).structured(messages, Answer)), Answer)
    assert len(calls) == 3, "malformed but not cut off: a retry may give another answer"


def test_unreachable_openai_endpoint_gives_a_clear_error() -> None:
    from pipelines.core.config import AppSettings, ModelSpec
    from pipelines.run.llm.openai_backend import build_openai

    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:9/v1", timeout_s=3)
    chat = build_openai(spec, AppSettings())
    with pytest.raises(BackendUnavailableError, match="cannot reach the endpoint"):
        asyncio.run(make(chat).text(load_prompt("search_queries").render(claim="c", n=1)))  # type: ignore[arg-type]


def test_concurrency_bound_is_respected() -> None:
    limiter = asyncio.Semaphore(1)

    async def go() -> float:
        llm = LLM(FakeChatModel(latency_s=0.1), role="debater", model_name="fake", limiter=limiter)
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.gather(*(llm.text(load_prompt("search_queries").render(claim="c", n=1)) for _ in range(3)))
        return loop.time() - start

    assert asyncio.run(go()) >= 0.3


class PromptCached(FakeChatModel):
    """Usage as llama.cpp's server reports it: part of each prompt kept from the call before (prompt_tokens_details.cached_tokens)."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        result = await super()._agenerate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        usage = dict(message.usage_metadata or {})
        message.usage_metadata = {**usage, "input_token_details": {"cache_read": usage["input_tokens"] - 3}}  # type: ignore[typeddict-item]
        return result


def test_prompt_tokens_the_server_reused_are_recorded_and_counted_apart() -> None:
    from pipelines.record.digest import Cost

    calls: list[ModelCallCompleted] = []
    messages = load_prompt("single_answer", "pipelines.protocols.single").render(
        claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses."
    )
    asyncio.run(make(PromptCached(), calls).reply(messages))
    asyncio.run(make(FakeChatModel(), calls).reply(messages))  # a server that says nothing of its cache: nothing reused
    assert calls[0].tokens_in > 3 and calls[0].tokens_reused == calls[0].tokens_in - 3
    assert calls[1].tokens_reused == 0
    cost = Cost().add_call(calls[0]).add_call(calls[1])
    assert cost.tokens_read == 3 + calls[1].tokens_in + calls[0].tokens_out + calls[1].tokens_out
    assert f"({cost.tokens_reused:,} reused from the server's prompt cache)" in cost.describe()
    assert "reused" not in Cost(calls=1, tokens_in=10).describe()


# --- a lost server: the reconnect hook (pipelines/run/server_restart.py gives it for a local server) ---


class _Gone(ConnectionError):
    pass


class _Breaks(FakeChatModel):
    """Answers ``broken`` calls by losing the connection (after ``shown`` streamed chunks), then answers as the fake does."""

    broken: int = 1
    shown: int = 0

    def _answer(self, messages, params):  # type: ignore[no-untyped-def]
        if self.broken and not self.shown:
            self.broken -= 1
            raise _Gone("connection refused")
        return super()._answer(messages, params)

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        breaking = self.broken > 0 and self.shown > 0
        if breaking:
            self.broken -= 1
        async for i, chunk in _enumerate(super()._astream(messages, stop, run_manager, **kwargs)):
            if breaking and i == self.shown:
                raise _Gone("peer closed connection mid-answer")
            yield chunk


async def _enumerate(chunks):  # type: ignore[no-untyped-def]
    i = 0
    async for chunk in chunks:
        yield i, chunk
        i += 1


def reconnecting(chat: FakeChatModel, to: FakeChatModel | None, calls: list[ModelCallCompleted] | None = None) -> tuple[LLM, list[str]]:
    asked: list[str] = []

    async def reconnect(failed, exc):  # type: ignore[no-untyped-def]
        asked.append(f"{type(exc).__name__}: {exc}")
        return to

    llm = LLM(chat, role="judge", model_name="fake", on_call=(calls.append if calls is not None else None), reconnect=reconnect)
    return llm, asked


def test_a_call_that_lost_its_server_is_asked_again_of_the_new_one_once() -> None:
    calls: list[ModelCallCompleted] = []
    fresh = _Breaks(broken=0)
    llm, asked = reconnecting(_Breaks(broken=5), fresh, calls)
    answer = asyncio.run(llm.structured(load_prompt("search_queries").render(claim="c", n=1), Answer))
    assert isinstance(answer, Answer) and asked == ["_Gone: connection refused"]
    assert llm.chat is fresh and fresh.calls == 1 and len(calls) == 1, "one answered call, recorded once"


def test_a_new_server_that_fails_too_or_none_started_fails_the_call_as_before() -> None:
    messages = load_prompt("search_queries").render(claim="c", n=1)
    llm, asked = reconnecting(_Breaks(broken=5), _Breaks(broken=5))
    with pytest.raises(BackendUnavailableError, match="cannot reach the endpoint"):
        asyncio.run(llm.text(messages))
    assert len(asked) == 1, "asked again once, not in a loop"
    still, asked = reconnecting(_Breaks(broken=5), None)
    with pytest.raises(BackendUnavailableError, match="cannot reach the endpoint"):
        asyncio.run(still.text(messages))
    assert len(asked) == 1


def test_only_a_lost_connection_asks_for_a_new_server() -> None:
    llm, asked = reconnecting(FakeChatModel(fail_after=0), FakeChatModel())
    with pytest.raises(BackendUnavailableError, match="simulated crash"):
        asyncio.run(llm.text(load_prompt("search_queries").render(claim="c", n=1)))
    assert asked == []


def test_an_answer_broken_mid_stream_goes_on_from_where_it_was_shown() -> None:
    messages = load_prompt("single_answer", "pipelines.protocols.single").render(
        claim="Masks reduce spread", evidence="[E1] Masks reduce spread of viruses."
    )
    whole = asyncio.run(make(FakeChatModel()).stream(messages, lambda _: None))
    deltas: list[str] = []
    llm, asked = reconnecting(_Breaks(broken=1, shown=2), FakeChatModel())
    text = asyncio.run(llm.stream(messages, deltas.append))
    assert asked == ["_Gone: peer closed connection mid-answer"]
    assert text == whole and "".join(deltas) == whole, "the two chunks shown before the break are not shown again"


def test_langchain_openai_s_own_connection_error_counts_as_a_lost_connection() -> None:
    import httpx
    from langchain_openai.chat_models.base import OpenAIConnectionError

    from pipelines.run.llm.client import _lost_connection

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    assert _lost_connection(OpenAIConnectionError(message="Connection error.", request=request))
    assert _lost_connection(httpx.RemoteProtocolError("peer closed connection without sending complete message body"))
    assert not _lost_connection(ValueError("bad JSON"))


def test_timeouts_of_every_client_library_count_as_timeouts() -> None:
    """A timeout asks the hook too: it tells a hung server (stopped and started again) from a slow one."""
    import httpx
    import openai
    from langchain_openai import StreamChunkTimeoutError

    from pipelines.run.llm.client import timed_out

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    assert timed_out(openai.APITimeoutError(request=request))
    assert timed_out(httpx.ReadTimeout("timed out", request=request))
    assert timed_out(StreamChunkTimeoutError(300.0))
    assert not timed_out(httpx.RemoteProtocolError("peer closed connection"))
    assert not timed_out(ValueError("bad JSON"))


class _BothInFlight(FakeChatModel):
    """Loses the connection of every call, but only once ``waiting`` calls are under way at once."""

    waiting: int = 2

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.waiting -= 1
        while self.waiting > 0:
            await asyncio.sleep(0.001)
        raise _Gone("connection refused")


def test_calls_under_way_together_that_lose_the_server_all_go_on_on_the_new_one() -> None:
    fresh = FakeChatModel()
    asked: list[str] = []

    async def reconnect(failed, exc):  # type: ignore[no-untyped-def]
        asked.append(str(exc))
        await asyncio.sleep(0.01)  # a server takes a while to start; the other call's failure arrives meanwhile
        return fresh

    llm = LLM(_BothInFlight(), role="scorer", model_name="fake", reconnect=reconnect)
    messages = load_prompt("search_queries").render(claim="c", n=1)

    async def two() -> list[str]:
        return list(await asyncio.gather(llm.text(messages), llm.text(messages)))

    answers = asyncio.run(two())
    assert len(answers) == 2 and all(answers) and fresh.calls == 2
    assert llm.chat is fresh and len(asked) <= 2


def test_an_answer_cut_inside_its_last_string_keeps_what_came_before() -> None:
    """The panel's judges wrote their scores and vote, then reasoning past the token limit: the ruling is kept, the
    reasoning as far as it got and ended with an ellipsis. A cut anywhere else is still no answer."""
    messages = load_prompt("search_queries").render(claim="c", n=1)
    calls: list[ModelCallCompleted] = []
    cut = CutOff(script=['{"label": "SUPPORTS", "reason": "The exhibit says \\"most\\" cases were mild, and the'])
    answer = asyncio.run(greedy(cut, calls, 0).structured(messages, Answer))
    assert answer == Answer(label="SUPPORTS", reason='The exhibit says "most" cases were mild, and the…')
    assert len(calls) == 1
    for raw in ('{"label": "SUPPORTS", "reas', '{"label": "SUPPORTS", "reason": "x", "score": 1', '{"label": "SUPPORTS",'):
        with pytest.raises(ModelOutputError, match="cut off at the token limit"):
            asyncio.run(greedy(CutOff(script=[raw]), calls, 0).structured(messages, Answer))
    not_cut = FakeChatModel(script=['{"label": "SUPPORTS", "reason": "The exhibit'] * 3)
    with pytest.raises(ModelOutputError):
        asyncio.run(greedy(not_cut, calls, 0).structured(messages, Answer))
