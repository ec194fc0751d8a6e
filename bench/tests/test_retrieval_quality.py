"""Smoke test of the retrieval benchmark on 20 dev claims (a 40-abstract slice of the corpus, indexed once).

It asserts only that every variant completes and reports every column: the figures
themselves are the benchmark's business (see docs/measurements/), not a test's.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.pool_recall import fake_services, pool_recall
from bench.retrieval_quality import COLUMNS, VARIANTS, Claim, Row, format_table, load_claims, run_benchmark, select_documents
from corpora.base import Document
from corpora.loaders import CheckCovidLoader
from pipelines.core.config import RunConfig
from tests.conftest import CHECK_COVID as BESIDE_REPO
from tests.fakes import with_settings

# Beside the repo in CI; a worktree elsewhere points at it with DEBATEDESK_CHECKCOVID_DIR.
CHECK_COVID = Path(os.environ.get("DEBATEDESK_CHECKCOVID_DIR") or BESIDE_REPO)
pytestmark = pytest.mark.skipif(not (CHECK_COVID / "corpus.json").is_file(), reason="the Check-COVID folder is not beside the repo")


@pytest.fixture(scope="module")
def slice_() -> tuple[list[Claim], list[Document]]:
    claims = load_claims(CHECK_COVID, "dev", limit=20)
    return claims, select_documents(list(CheckCovidLoader(CHECK_COVID).load_documents()), claims, corpus_docs=24)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def rows(slice_: tuple[list[Claim], list[Document]], embedder, data_dir: Path) -> list[Row]:  # type: ignore[no-untyped-def]
    claims, documents = slice_
    # Indexed once, as "check-covid", so the pool-recall test below runs on the same index.
    return run_benchmark(claims, documents, embedder=embedder, data_dir=data_dir, backend="fake", corpus="check-covid")


def test_every_variant_completes_and_reports_every_column(rows: list[Row]) -> None:
    assert [r.variant for r in rows] == list(VARIANTS)
    table = format_table(rows).splitlines()
    assert table[0] == "| " + " | ".join(COLUMNS) + " |"
    for row, line in zip(rows, table[2:], strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(COLUMNS) and cells[0] == row.variant
        assert all(float(c) >= 0 for c in cells[1:]), line
        assert row.claims == 20


def test_pool_recall_runs_a_protocol_over_claims(slice_: tuple[list[Claim], list[Document]], rows: list[Row], data_dir: Path) -> None:
    claims, documents = slice_

    class SliceLoader:
        name = "check-covid"

        def load_documents(self) -> Iterator[Document]:
            return iter(documents)

    services = fake_services(data_dir, CHECK_COVID)  # the same cached MiniLM as the session's embedder
    services.builtin_corpora["check-covid"] = SliceLoader  # only used if the index were empty
    assert services.index.count("check-covid") > 0
    config = RunConfig().with_backend("fake")
    config = with_settings(config, "retrieval", web_search=False)
    result = pool_recall("single", claims[:3], services, config)
    assert result.claims == 3 and result.failed == 0 and 0 <= result.recall <= 1 and result.documents >= 1
    assert result.line().startswith("| single | 0 | 3 |")


def test_the_rewrites_benchmark_compares_every_ranking_on_the_fake_model(
    slice_: tuple[list[Claim], list[Document]], rows: list[Row], data_dir: Path
) -> None:
    from bench.query_rewrites import measure, sample, table
    from pipelines.run.llm.client import LLM
    from pipelines.run.llm.fake import FakeChatModel

    claims, _ = slice_
    services = fake_services(data_dir, CHECK_COVID)  # the index the rows fixture built
    llm = LLM(FakeChatModel(), role="judge", model_name="fake")
    chosen = sample(claims, 4)
    assert [c.id for c in chosen] == [c.id for c in claims[::5][:4]]
    found = [measure(services.index, llm, claim, rewrites=2, judge=i == 0) for i, claim in enumerate(chosen)]
    assert found[0].judged and found[1].judged is None
    assert all(len(f.each) >= 2 and f.alone and f.fused for f in found)  # the claim, then the fake's rewrite
    lines = table(found).splitlines()
    assert len(lines) == 2 + 3 + 2 and lines[-1].startswith("judge rerank of the claim's top 20, 1 claims: R@3 ")
    for line in lines[2:5]:
        assert len([c for c in line.strip("|").split("|") if c.strip()]) == 6, line


def test_each_passage_precision_gets_its_own_index_and_rows(slice_: tuple[list[Claim], list[Document]], embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    claims, documents = slice_
    both = []
    for precision in ("int8", "float32"):
        both += run_benchmark(
            claims[:5], documents, embedder=embedder, data_dir=tmp_path / precision, variants=["dense"], passage_precision=precision
        )
    assert [r.variant for r in both] == ["dense, int8 passages", "dense, float32 passages"]
    assert all(len(r.values()) == len(COLUMNS) for r in both)
