"""Datasets of claims with gold labels: Check-COVID by folder path, or any JSONL file a desk brings.

A desk's own file is JSON lines, one claim per line::

    {"claim": "Masks reduce transmission", "label": "SUPPORTS", "id": "c1",
     "evidence": [{"doc_id": "masks-01", "sentences": [0, 2]}]}

``claim`` and ``label`` are required; ``label`` is any spelling ``labels.ALIASES`` knows (or one
mapped with ``--label-map``); ``id`` defaults to the line number; ``evidence`` (the gold
rationale: document ids of the corpus and sentence indices in them) is optional and only
needed for evidence recall.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corpora.jsonl import jsonl_objects
from pipelines.core.domain import Label
from pipelines.eval.labels import LabelMappingError, require_canonical

CHECK_COVID = "check-covid"
CHECK_COVID_SPLITS = ("train", "dev")
CHECK_COVID_FILE = "covidCheck_{split}_composed.json"


class DatasetError(ValueError):
    """A dataset that cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class GoldSentence:
    """One sentence of the gold rationale: a document of the corpus and a sentence index in it."""

    doc_id: str
    sentence: int


@dataclass(frozen=True)
class EvalItem:
    """A claim to check, its gold label (canonical) and, when known, the sentences that decide it."""

    id: str
    claim: str
    label: Label
    gold_evidence: tuple[GoldSentence, ...] = ()
    raw_label: str = ""


@dataclass(frozen=True)
class Dataset:
    """A named list of items; ``corpus`` is the corpus its gold evidence points into, if any."""

    name: str
    split: str
    items: tuple[EvalItem, ...]
    corpus: str | None = None
    source: str = ""
    label_counts: dict[str, int] = field(default_factory=dict)

    def sample(self, limit: int | None, seed: int = 0) -> Dataset:
        """A fixed, label-balanced sample (see ``sample_items``); the whole set when ``limit`` is None."""
        items = sample_items(self.items, limit, seed)
        return Dataset(self.name, self.split, items, self.corpus, self.source, _counts(items))


def load_dataset(
    spec: str | Path,
    split: str = "dev",
    *,
    checkcovid_dir: Path | None = None,
    label_map: Mapping[str, Label] | None = None,
) -> Dataset:
    """``check-covid`` (the folder in settings), a Check-COVID-style folder, or a JSONL file."""
    if str(spec) == CHECK_COVID:
        if checkcovid_dir is None:
            raise DatasetError("check-covid needs its folder: set DEBATEDESK_CHECKCOVID_DIR")
        return load_check_covid(checkcovid_dir, split)
    path = Path(spec).expanduser()
    if path.is_dir():
        return load_check_covid(path, split)
    if path.is_file():
        return load_jsonl(path, label_map=label_map)
    raise DatasetError(f"{spec}: no such dataset; use 'check-covid', a Check-COVID folder, or a .jsonl file of claims with labels")


def load_check_covid(folder: Path, split: str) -> Dataset:
    """Check-COVID's train or dev split: SUPPORT/REFUTE/NOTENOUGHINFO, gold sentences in ``evidence_set``."""
    if split not in CHECK_COVID_SPLITS:
        raise DatasetError(f"Check-COVID split {split!r}: use one of {', '.join(CHECK_COVID_SPLITS)} (the test split is held out)")
    path = folder / CHECK_COVID_FILE.format(split=split)
    if not path.is_file():
        raise DatasetError(f"no {path.name} in {folder}: point DEBATEDESK_CHECKCOVID_DIR at the Check-COVID folder")
    items = []
    for number, row in _jsonl_rows(path):
        where = f"{path.name} line {number}"
        gold = tuple(
            GoldSentence(doc_id=str(row["cord_id"]), sentence=int(e["sent_index"]))
            for e in row.get("evidence_set") or []
            if "sent_index" in e
        )
        items.append(
            EvalItem(
                id=str(row.get("id") or f"{split}-{number}"),
                claim=_claim_text(row.get("claim"), where),
                label=require_canonical(str(row.get("label", "")), where),
                gold_evidence=gold,
                raw_label=str(row.get("label", "")),
            )
        )
    return Dataset(CHECK_COVID, split, tuple(items), corpus=CHECK_COVID, source=str(path), label_counts=_counts(items))


def load_jsonl(path: Path, *, label_map: Mapping[str, Label] | None = None) -> Dataset:
    """A desk's own claims (the format in this module's docstring)."""
    items: list[EvalItem] = []
    for number, row in _jsonl_rows(path):
        where = f"{path.name} line {number}"
        if "label" not in row:
            raise DatasetError(f'{where}: needs a "label" (found fields: {", ".join(sorted(row)) or "none"})')
        try:
            label = require_canonical(str(row["label"]), where, label_map)
        except LabelMappingError as exc:
            raise DatasetError(str(exc)) from exc
        items.append(
            EvalItem(
                id=str(row.get("id") or f"{path.stem}-{number}"),
                claim=_claim_text(row.get("claim"), where),
                label=label,
                gold_evidence=_gold_of(row.get("evidence"), where),
                raw_label=str(row["label"]),
            )
        )
    if not items:
        raise DatasetError(f"{path.name}: no claims in the file")
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise DatasetError(f"{path.name}: id {duplicate!r} appears more than once; ids must be unique")
    return Dataset(path.stem, "all", tuple(items), corpus=None, source=str(path), label_counts=_counts(items))


def sample_items(items: tuple[EvalItem, ...] | list[EvalItem], limit: int | None, seed: int = 0) -> tuple[EvalItem, ...]:
    """``limit`` items, the same ones for the same seed: shuffled within each label, then taken in turn.

    Taking labels in turn keeps a small sample balanced (10 claims of Check-COVID dev give
    4/3/3, not whatever the file order happens to start with). The sample of a limit starts
    with the sample of any smaller one, a limit of the whole set included (so a sample can be
    read in parts: ``bench/desk.py --limit N --skip M``); no limit is the set in its own order.
    """
    if limit is None:
        return tuple(items)
    if limit < 1:
        raise DatasetError(f"limit must be at least 1, got {limit}")
    limit = min(limit, len(items))
    rng = random.Random(seed)
    groups: dict[str, list[EvalItem]] = {}
    for item in items:
        groups.setdefault(item.label, []).append(item)
    for label in sorted(groups):
        rng.shuffle(groups[label])
    picked: list[EvalItem] = []
    while len(picked) < limit:
        for label in sorted(groups):
            if groups[label] and len(picked) < limit:
                picked.append(groups[label].pop(0))
    return tuple(picked)


def _claim_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f'{where}: needs a non-empty "claim"')
    return " ".join(value.split())


def _gold_of(value: Any, where: str) -> tuple[GoldSentence, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise DatasetError(f'{where}: "evidence" must be a list of {{"doc_id": ..., "sentences": [...]}}')
    gold: list[GoldSentence] = []
    for entry in value:
        if not isinstance(entry, dict) or "doc_id" not in entry or not isinstance(entry.get("sentences", []), list):
            raise DatasetError(f'{where}: each "evidence" entry needs "doc_id" and a list "sentences", got {entry!r}')
        try:
            gold.extend(GoldSentence(str(entry["doc_id"]), int(s)) for s in entry.get("sentences", []))
        except (TypeError, ValueError) as exc:
            raise DatasetError(f'{where}: "sentences" must be whole numbers (sentence indices), got {entry.get("sentences")!r}') from exc
    return tuple(gold)


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path.name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from exc
    return list(jsonl_objects(text, path.name, DatasetError))


def _counts(items: tuple[EvalItem, ...] | list[EvalItem]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item.label] = counts.get(item.label, 0) + 1
    return counts
