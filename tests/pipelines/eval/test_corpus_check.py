"""Which documents a dataset's gold evidence names are missing from the corpus chosen for it."""

from pipelines.eval.corpus_check import evidence_coverage
from pipelines.eval.datasets import Dataset, EvalItem, GoldSentence


def dataset(*doc_ids: str) -> Dataset:
    items = tuple(EvalItem(id=f"c{i}", claim="c", label="SUPPORTS", gold_evidence=(GoldSentence(d, 0),)) for i, d in enumerate(doc_ids))
    return Dataset("mine", "all", (*items, EvalItem(id="x", claim="c", label="REFUTES")))


def test_every_named_document_found() -> None:
    coverage = evidence_coverage(dataset("a", "b", "a"), {"a", "b", "c"})
    assert (coverage.named, coverage.missing, coverage.none_found) == (2, (), False)


def test_some_or_none_found() -> None:
    assert evidence_coverage(dataset("a", "z"), {"a"}).missing == ("z",)
    assert evidence_coverage(dataset("y", "z"), {"a"}).none_found


def test_a_file_without_gold_evidence_is_never_refused() -> None:
    assert not evidence_coverage(dataset(), set()).none_found
