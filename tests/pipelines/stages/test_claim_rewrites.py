"""retrieval.rewrites: the claim put as search queries by the model, searched once per run by every protocol that searches for the claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.config import RunConfig
from pipelines.core.events import Event, EvidenceRetrieved, QueryIssued, StageCompleted, StageFailed, StageStarted, VerdictReached
from pipelines.run.runner import stream_run
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import ScriptedFake, fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
REWRITES = ["hand washing hygiene infection", "vaccine trial efficacy"]  # words that reach other demo documents


def config_for(protocol: str, rewrites: int) -> RunConfig:
    config = fake_config(protocol=protocol)
    return with_settings(config, "retrieval", rewrites=rewrites, web_search=False)


def run(demo_data_dir: Path, embedder: Embedder, protocol: str, rewrites: int, chat: ScriptedFake) -> list[Event]:
    services = make_services(demo_data_dir, embedder, chat=chat)
    return list(stream_run(CLAIM, config_for(protocol, rewrites), services))


def rewriting_model(queries: list[str]) -> ScriptedFake:
    return ScriptedFake(answers={"SearchQueries": lambda prompt: {"queries": queries} if "search quer" in prompt else None})


@pytest.mark.parametrize("protocol", ["toolmad", "madke", "radar", "proclaim"])
def test_each_rewrite_is_searched_with_its_own_top_k_and_its_finds_join_the_pool(
    demo_data_dir: Path, embedder: Embedder, protocol: str
) -> None:
    without = run(demo_data_dir, embedder, protocol, 0, rewriting_model(REWRITES))
    chat = rewriting_model(REWRITES)
    events = run(demo_data_dir, embedder, protocol, 2, chat)
    assert isinstance(events[-1], VerdictReached)
    rewrite_queries = [e for e in events if isinstance(e, QueryIssued) and e.query in REWRITES]
    assert {e.query for e in rewrite_queries} == set(REWRITES) and all(e.rewritten for e in rewrite_queries)
    by_rewrite = {e.evidence.doc_id for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.query in REWRITES}
    assert by_rewrite, "a rewrite found nothing the claim had not"
    docs = lambda evts: {e.evidence.doc_id for e in evts if isinstance(e, EvidenceRetrieved)}  # noqa: E731
    assert docs(events) > docs(without)  # the pool grows by what only the rewrites found
    # One model call writes the rewrites for the whole run, even when two debaters search at once.
    assert len(chat.prompts_for("SearchQueries", "Write 2 search")) == 1
    stage = [e for e in events if isinstance(e, StageCompleted) and e.stage == "query rewrites"]
    assert len(stage) == 1 and stage[0].detail == "; ".join(REWRITES)
    assert not [e for e in without if isinstance(e, StageStarted) and e.stage == "query rewrites"]


def test_rewrites_off_by_default_cost_no_call(demo_data_dir: Path, embedder: Embedder) -> None:
    chat = rewriting_model(REWRITES)
    services = make_services(demo_data_dir, embedder, chat=chat)
    config = fake_config(protocol="radar")
    assert config.retrieval.rewrites == 0
    events = list(stream_run(CLAIM, config, services))
    assert isinstance(events[-1], VerdictReached)
    assert not chat.prompts_for("SearchQueries", "Write")


def test_a_rewrite_equal_to_the_claim_is_not_searched_twice(demo_data_dir: Path, embedder: Embedder) -> None:
    events = run(demo_data_dir, embedder, "radar", 2, rewriting_model([CLAIM.upper(), "  " + CLAIM + " "]))
    assert [e.query for e in events if isinstance(e, QueryIssued)] == [CLAIM]
    assert [e.detail for e in events if isinstance(e, StageCompleted) and e.stage == "query rewrites"] == ["none usable"]


def test_malformed_rewrites_are_reported_and_the_claim_is_still_searched(demo_data_dir: Path, embedder: Embedder) -> None:
    chat = ScriptedFake(malformed_when="search quer")
    events = run(demo_data_dir, embedder, "madke", 2, chat)
    assert isinstance(events[-1], VerdictReached)
    failed = [e for e in events if isinstance(e, StageFailed) and e.stage == "query rewrites"]
    assert len(failed) == 1 and "searching with the claim itself" in failed[0].reason
    assert [e.query for e in events if isinstance(e, QueryIssued)] == [CLAIM]
    assert [e for e in events if isinstance(e, EvidenceRetrieved)]


def test_the_option_is_bounded() -> None:
    with pytest.raises(ValueError):
        RunConfig.model_validate({"retrieval": {"rewrites": 6}})
    assert RunConfig.model_validate({"retrieval": {"rewrites": "3"}}).retrieval.rewrites == 3
