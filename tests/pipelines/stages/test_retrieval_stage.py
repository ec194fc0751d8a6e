"""The retrieval stage as protocols use it: the run's search mode, rerank and web source policy."""

import asyncio

import pytest
from pydantic import ValidationError

from pipelines.core.config import RunConfig
from pipelines.core.events import EvidenceRetrieved, QueryIssued, RunStarted, StageFailed, WebResultsFiltered
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.web import WebResult
from tests.fakes import CannedWeb, fake_config, with_settings

PAGES = [
    WebResult(title="Masks study (CDC)", url="https://www.cdc.gov/masks", snippet="Masks reduce transmission of respiratory viruses."),
    WebResult(title="Tabloid", url="https://news.tabloid.example/masks", snippet="Masks reduce transmission, says a celebrity."),
    WebResult(title="NIH trial", url="https://www.ncbi.nlm.nih.gov/pmc/1", snippet="A trial of masks and respiratory viruses."),
    WebResult(title="Blog", url="https://blog.example.org/masks", snippet="Masks reduce transmission of respiratory viruses."),
]


def with_retrieval(**updates: object) -> RunConfig:
    return with_settings(fake_config(protocol="toolmad"), "retrieval", **updates)  # toolmad's debaters search with the run's top_k


def run(services: Services, config: RunConfig, claim: str = "Masks reduce transmission of respiratory viruses") -> list:  # type: ignore[type-arg]
    return list(stream_run(claim, config, services))


def test_a_denied_web_result_never_reaches_an_agent_and_an_event_counts_it(services: Services) -> None:
    services.web = CannedWeb(PAGES)  # type: ignore[assignment]
    config = with_retrieval(allow_domains=["gov"], deny_domains=["ncbi.nlm.nih.gov"], web_top_k=3)
    events = run(services, config)
    web_items = [e.evidence for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.source == "web"]
    assert [e.url for e in web_items] == ["https://www.cdc.gov/masks"]
    filtered = [e for e in events if isinstance(e, WebResultsFiltered)]
    assert len(filtered) == 1 and filtered[0].filtered == 3 and filtered[0].kept == 1
    assert "only gov" in filtered[0].policy and "never ncbi.nlm.nih.gov" in filtered[0].policy
    assert any("deny list" in r for r in filtered[0].reasons) and any("not on the allow list" in r for r in filtered[0].reasons)
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.config["retrieval"]["allow_domains"] == ["gov"]  # the policy is recorded with the run
    assert started.config["retrieval"]["deny_domains"] == ["ncbi.nlm.nih.gov"]


def test_the_health_preset_filters_and_an_open_policy_emits_nothing(services: Services) -> None:
    services.web = CannedWeb(PAGES)  # type: ignore[assignment]
    events = run(services, with_retrieval(source_policy="health", web_top_k=4))
    urls = {e.evidence.url for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.source == "web"}
    assert urls == {"https://www.cdc.gov/masks", "https://www.ncbi.nlm.nih.gov/pmc/1"}
    open_events = run(services, with_retrieval(web_top_k=4))
    assert not [e for e in open_events if isinstance(e, WebResultsFiltered)]


def test_the_web_tool_a_protocol_receives_is_already_filtered(services: Services) -> None:
    services.web = CannedWeb(PAGES)  # type: ignore[assignment]
    web = services.web_search(with_retrieval(deny_domains=["example.org", "tabloid.example"]))
    assert [r.url for r in web.search("masks", 4)] == ["https://www.cdc.gov/masks", "https://www.ncbi.nlm.nih.gov/pmc/1"]


@pytest.mark.parametrize("bad", ["https://www.nature.com/", "not a domain!", "cdc.gov/flu"])
def test_a_malformed_domain_is_refused_with_a_clear_message(bad: str) -> None:
    with pytest.raises(ValidationError, match="domain"):
        RunConfig.model_validate({"retrieval": {"deny_domains": bad}})


def test_corpus_queries_use_the_configured_mode_and_carry_every_score(services: Services) -> None:
    for mode, expected in (("hybrid", {"dense", "lexical", "fused"}), ("dense", {"dense"}), ("lexical", {"lexical"})):
        events = run(services, with_retrieval(mode=mode, web_search=False))
        corpus = [e.evidence for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.source == "corpus"]
        assert corpus and all(set(e.scores) == expected for e in corpus), mode
        assert all(e.passage_index is not None and e.sentence_indices for e in corpus)
        assert len({e.doc_id for e in corpus}) == len(corpus)  # one passage per document


@pytest.mark.parametrize("rerank", ["sentences", "judge"])
def test_a_rerank_reorders_the_fused_top_20_and_records_its_score(services: Services, rerank: str) -> None:
    events = run(services, with_retrieval(rerank=rerank, web_search=False, top_k=3))
    corpus = [e.evidence for e in events if isinstance(e, EvidenceRetrieved) and e.evidence.source == "corpus"]
    assert len(corpus) == 3 and all("rerank" in e.scores and rerank.rstrip("s") in "".join(e.scores) for e in corpus)
    assert not [e for e in events if isinstance(e, StageFailed)]


def test_a_failed_judge_rerank_keeps_the_fused_order(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_when="Rate every passage")
    events = run(services, with_retrieval(rerank="judge", web_search=False))
    failed = [e for e in events if isinstance(e, StageFailed) and e.stage == "rerank"]
    assert failed and "keeping the fused order" in failed[0].reason
    assert [e for e in events if isinstance(e, EvidenceRetrieved)]


def test_formulated_queries_are_searched_together_with_the_claim(services: Services) -> None:
    from pipelines.run.llm.client import LLM
    from pipelines.stages.query_formulation import formulate_queries

    queries = asyncio.run(
        formulate_queries(
            LLM(FakeChatModel(), role="debater", model_name="fake"), "Do masks cut flu spread?", n=2, premises=["Masks filter droplets"]
        )
    )
    assert queries[0] == "Do masks cut flu spread?" and queries[-1] == "Masks filter droplets" and len(queries) == 3
    assert [e for e in run(services, with_retrieval(web_search=False)) if isinstance(e, QueryIssued)]
