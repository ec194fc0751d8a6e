"""Re-run on frozen evidence: another protocol on a stored run's evidence, with no search, both runs linked."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.errors import DebateDeskError
from pipelines.core.events import EvidenceRetrieved, RunStarted, VerdictReached
from pipelines.record.digest import digest
from pipelines.record.store import RunStore
from pipelines.run.runner import resume_run, start_run, stream_run
from pipelines.run.services import Services
from pipelines.run.tools.embeddings import Embedder
from tests.fakes import CannedWeb, fake_config, make_services, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"


class CountingIndex:
    """Wraps the real index and counts searches: a frozen run must not make any."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.searches = 0

    def __getattr__(self, name: str) -> object:
        if name == "search":
            self.searches += 1
        return getattr(self.inner, name)


@pytest.fixture
def fresh(tmp_path: Path, demo_data_dir: Path, embedder: Embedder) -> Services:
    services = make_services(demo_data_dir, embedder, web=CannedWeb())
    services.store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    return services


def test_a_rerun_with_another_protocol_sees_only_the_stored_evidence_and_links_both_runs(fresh: Services) -> None:
    source_events = list(stream_run(CLAIM, with_settings(fake_config(protocol="single"), "retrieval", web_search=True), fresh))
    source = digest(source_events)
    assert source.run_id and source.evidence
    web = fresh.web
    index = CountingIndex(fresh.index)
    fresh.index = index  # type: ignore[assignment]
    web_calls = web.calls  # type: ignore[attr-defined]

    handle = start_run(CLAIM, fake_config(protocol="desk"), fresh, by="ana", frozen_from=source.run_id)
    events = list(handle.stream())
    assert isinstance(events[-1], VerdictReached)
    started = events[0]
    assert isinstance(started, RunStarted) and started.source_run == source.run_id and started.by == "ana"
    assert index.searches == 0 and web.calls == web_calls, "no new search of the corpus or the web"  # type: ignore[attr-defined]
    stored_texts = {e.text for e in source.evidence.values()}
    found = [e.evidence for e in events if isinstance(e, EvidenceRetrieved)]
    assert found and {e.text for e in found} <= stored_texts, "every item the re-run saw is one the source run found"

    store = fresh.store
    assert store is not None
    rerun = store.get_run(handle.run_id)
    assert rerun is not None and rerun.source_run == source.run_id and rerun.started_by == "ana" and rerun.protocol == "desk"
    assert [r.id for r in store.reruns_of(source.run_id)] == [handle.run_id]
    assert store.reruns_of(handle.run_id) == []


def test_a_rerun_of_an_unknown_run_or_one_without_evidence_is_refused_before_it_starts(fresh: Services) -> None:
    with pytest.raises(DebateDeskError, match="no run 'nope' in the store"):
        start_run(CLAIM, fake_config(protocol="desk"), fresh, frozen_from="nope")
    mad = list(stream_run(CLAIM, fake_config(protocol="mad"), fresh))  # mad argues from what the models know: no evidence
    with pytest.raises(DebateDeskError, match="has no evidence to re-run on"):
        start_run(CLAIM, fake_config(protocol="desk"), fresh, frozen_from=mad[0].run_id)  # type: ignore[attr-defined]


def test_a_rerun_stopped_by_its_budget_resumes_on_the_same_frozen_evidence(fresh: Services) -> None:
    source = digest(list(stream_run(CLAIM, fake_config(protocol="single"), fresh)))
    index = CountingIndex(fresh.index)
    fresh.index = index  # type: ignore[assignment]
    limited = with_settings(fake_config(protocol="desk"), "budget", max_calls=2)
    stopped = list(start_run(CLAIM, limited, fresh, frozen_from=source.run_id).stream())
    run_id = stopped[0].run_id  # type: ignore[attr-defined]
    assert digest(stopped).stopped_by is not None

    unlimited = with_settings(limited, "budget", max_calls=0)
    list(resume_run(run_id, fresh, secrets_from=unlimited, limits=unlimited.budget, may_raise=True).stream())  # an editor lifts it
    record = fresh.store.events(run_id)  # type: ignore[union-attr]
    assert isinstance(record[-1], VerdictReached) and index.searches == 0, "the resumed re-run searched nothing either"
    assert {e.evidence.text for e in record if isinstance(e, EvidenceRetrieved)} <= {e.text for e in source.evidence.values()}
