"""What mermaid's evidence memory recalls for a claim when an entity every claim shares matches everything kept.

    .venv/bin/python bench/memory_recall.py [--split train] [--limit 300] [--data-dir DIR] [--entity covid-19]
        [--floors 0,0.4,0.45,0.5,0.55] [--k 5] [--kept 3] [--exhibits 25] [--young 20]

No model is called. The Check-COVID claims are taken in file order, as a desk meets them; for each:

1. its exhibits are the first ``--exhibits`` documents of the corpus search (hybrid, the claim as the query), as
   desk's grounding gathers them; a recalled item already among them is not new to the run (mermaid keeps its id);
2. the memory (``EvidenceMemory``, the app's, in a throwaway SQLite file) is asked for ``--k`` items, every kept
   item matching the claim's entity (``--entity``: on Check-COVID the model names COVID-19 for nearly every claim),
   once per entity-match floor (``mermaid.memory_entity_similarity``);
3. then the claim's first ``--kept`` exhibits are kept (mermaid keeps what its researcher saw: desk's first
   ``retrieval.top_k`` exhibits and what its searches found), with the entity.

Printed per floor, for the first ``--young`` claims (a young memory) and for the rest: items recalled a claim,
items new to the run a claim and how many of those come from the claim's own abstract (its ``cord_id``, the one that
decides it), and on how many claims an unseen passage of the own abstract sat in the memory and was recalled.
Every new item costs the run a stance reading (about 250 prompt tokens on the embedded model) and a place in the
researcher's prompt (up to 700 characters). Tune on train; the corpus must be ingested in the data folder
(``python -m pipelines ingest check-covid``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.core.config import AppSettings
from pipelines.core.domain import Evidence
from pipelines.run.tools.corpus_index import CorpusIndex, Hit
from pipelines.run.tools.embeddings import default_embedder
from pipelines.run.tools.memory import EvidenceMemory, evidence_key

CORPUS = "check-covid"
MIN_SIMILARITY = 0.55  # mermaid.memory_similarity's default: a kept item this similar is recalled without an entity match


@dataclass
class Tally:
    claims: int = 0
    recalled: int = 0
    new: int = 0
    own: int = 0
    own_there: int = 0  # claims with an unseen passage of their own abstract in the memory
    own_found: int = 0  # ... and recalled

    def row(self, floor: float, part: str) -> str:
        per = max(self.claims, 1)
        return (
            f"| {floor:.2f} | {part} | {self.claims} | {self.recalled / per:.2f} | {self.new / per:.2f} | {self.own / per:.2f} "
            f"| {self.own_found} of {self.own_there} |"
        )


def as_evidence(hit: Hit, number: int) -> Evidence:
    p = hit.passage
    return Evidence(id=f"E{number}", source="corpus", text=p.text, title=p.title, corpus=CORPUS, doc_id=p.doc_id, passage_index=p.index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="train", choices=("train", "dev"))
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--data-dir", type=Path, default=None, help="the app's data folder with check-covid ingested")
    parser.add_argument("--checkcovid-dir", type=Path, default=None, help="the Check-COVID folder (default: the app's setting)")
    parser.add_argument("--entity", default="covid-19")
    parser.add_argument("--floors", default="0,0.4,0.45,0.5,0.55")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--kept", type=int, default=3)
    parser.add_argument("--exhibits", type=int, default=25)
    parser.add_argument("--young", type=int, default=20)
    args = parser.parse_args()

    settings = AppSettings() if args.data_dir is None else AppSettings(data_dir=args.data_dir)
    folder = args.checkcovid_dir or settings.checkcovid_dir
    path = Path(folder) / f"covidCheck_{args.split}_composed.json"
    if not path.is_file():
        raise SystemExit(f"no {path.name} in {folder}: pass --checkcovid-dir or set DEBATEDESK_CHECKCOVID_DIR")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][: args.limit]
    embedder = default_embedder()
    index = CorpusIndex(settings, embedder)
    if not index.has(CORPUS):
        raise SystemExit(f"no {CORPUS} corpus in {settings.data_dir}: run `python -m pipelines ingest {CORPUS}` first")
    floors = [float(f) for f in args.floors.split(",")]
    tallies = {(f, young): Tally() for f in floors for young in (True, False)}
    with tempfile.TemporaryDirectory() as tmp:
        memory = EvidenceMemory.from_url(f"sqlite:///{Path(tmp) / 'memory.sqlite'}", embedder)
        for i, row in enumerate(rows):
            claim, own = row["claim"].strip(), str(row["cord_id"])
            exhibits = [as_evidence(h, n) for n, h in enumerate(index.search(CORPUS, claim, args.exhibits), start=1)]
            in_run = {evidence_key(e) for e in exhibits}
            kept_own_unseen = any(
                r.item.doc_id == own and r.item.key not in in_run
                for r in memory.recall(text=claim, entities=[args.entity], k=10**6, min_similarity=0.0)
            )
            for floor in floors:
                recalls = memory.recall(
                    text=claim, entities=[args.entity], k=args.k, min_similarity=MIN_SIMILARITY, entity_similarity=floor
                )
                new = [r for r in recalls if r.item.key not in in_run]
                t = tallies[(floor, i < args.young)]
                t.claims += 1
                t.recalled += len(recalls)
                t.new += len(new)
                t.own += sum(r.item.doc_id == own for r in new)
                t.own_there += kept_own_unseen
                t.own_found += any(r.item.doc_id == own for r in new)
            memory.remember(exhibits[: args.kept], claim=claim, topic="", entities=[args.entity])
    print(
        f"Check-COVID {args.split}, the first {len(rows)} claims in file order; every kept item matches the entity "
        f"{args.entity!r}; {args.k} recalled at most, {args.kept} kept a claim, {args.exhibits} exhibits a claim\n"
    )
    print(
        "| entity floor | which | claims | recalled a claim | new to the run a claim | of them own abstract | own abstract's unseen passage recalled |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for floor in floors:
        print(tallies[(floor, True)].row(floor, f"first {args.young}"))
        print(tallies[(floor, False)].row(floor, "the rest"))


if __name__ == "__main__":
    main()
