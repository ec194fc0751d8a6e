"""Before an evaluation on a checker's own file: is its gold evidence in the corpus chosen for it?"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.eval.datasets import Dataset


@dataclass(frozen=True)
class EvidenceCoverage:
    """How many of the documents a dataset's gold evidence names are in a corpus, and which are not."""

    named: int
    missing: tuple[str, ...]

    @property
    def none_found(self) -> bool:
        return self.named > 0 and len(self.missing) == self.named


def evidence_coverage(dataset: Dataset, corpus_documents: set[str]) -> EvidenceCoverage:
    """Which documents named by ``dataset``'s gold evidence are missing from a corpus holding ``corpus_documents``."""
    named = sorted({g.doc_id for item in dataset.items for g in item.gold_evidence})
    return EvidenceCoverage(named=len(named), missing=tuple(d for d in named if d not in corpus_documents))
