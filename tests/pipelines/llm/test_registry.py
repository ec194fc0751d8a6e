import pytest

from pipelines.core.config import AppSettings, ModelSpec
from pipelines.core.errors import UnknownBackendError, UnknownProtocolError
from pipelines.protocols.base import get_protocol
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.llm.registry import backend_names, build_chat_model, get_backend


def test_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownBackendError) as info:
        get_backend("gpt-17")
    assert "embedded" in str(info.value) and "fake" in str(info.value) and "openai" in str(info.value)


def test_unknown_protocol_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownProtocolError, match="single"):
        get_protocol("shouting-match")


def test_builtin_backends_are_registered_and_fake_is_labelled_not_real() -> None:
    assert {"fake", "embedded", "openai"} <= set(backend_names())
    assert not get_backend("fake").is_real_model
    assert get_backend("embedded").is_real_model


def test_fake_builder_gives_a_chat_model() -> None:
    assert isinstance(build_chat_model(ModelSpec(backend="fake"), AppSettings()), FakeChatModel)
