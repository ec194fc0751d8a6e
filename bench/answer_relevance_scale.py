"""Where toolmad's AR threshold sits on MiniLM's scale: each stored answer's questions against its own claim and against others.

    .venv/bin/python bench/answer_relevance_scale.py --data-dir DIR [--data-dir DIR2 ...] [--split train]
        [--others 50] [--false-pass 0.05] [--thresholds 0.8,0.7,0.6,0.5,0.4]

Answer relevance (AR, ``pipelines/stages/answer_relevance.py``) is the mean cosine of the claim
with the questions the scorer wrote from an answer without seeing the claim. Tool-MAD's AR >= 0.8
was set on OpenAI's embeddings; this app embeds with MiniLM, whose cosines sit on a scale of
their own. Each stored toolmad answer's AR event keeps its questions, so with no model call this
bench scores every distinct stored answer (the questions written for it) twice: with its own
claim (what the run scored) and with ``--others`` claims of the Check-COVID split, drawn at
random, leaving out the claim's own group (Check-COVID writes several claims from one source:
``ID_0``, ``ID_1``). It prints the share of each kind that passes each threshold, the share of
other claims an answer's own claim outranks, and the calibrated threshold: the lowest multiple
of 0.05 at which at most ``--false-pass`` of the answers set against another claim pass. A
debate stops early only when both answers pass, so two answers off the claim would both pass
far less often than one.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.toolmad_early_stop import floats
from pipelines.core.config import AppSettings
from pipelines.core.events import RunStarted, ScoreComputed, TurnCompleted
from pipelines.eval.datasets import Dataset, load_dataset
from pipelines.record.store import RunFilter, RunStore
from pipelines.run.tools.embeddings import Embedder, cosine_matrix, default_embedder

_QUESTION = re.compile(r"(.+?) \((-?\d+\.\d+)\)(?: \| |$)")


@dataclass(frozen=True)
class ScoredAnswer:
    """One stored answer's AR: its claim, turn, the questions the scorer wrote for it and the AR the run stored."""

    claim: str
    turn: str
    questions: tuple[str, ...]
    stored: float


@dataclass(frozen=True)
class Scale:
    """AR with the answer's own claim (one per answer) and with other claims (``others`` per answer), and the share outranked."""

    own: tuple[float, ...]
    other: tuple[float, ...]
    outranked: tuple[float, ...]  # per answer: the share of its other claims whose AR is below its own claim's


def questions_of(detail: str) -> tuple[str, ...]:
    """The questions in an AR event's detail, as ``stages.scoring`` writes it: "REASON: q1 (0.89) | q2 (0.66)"."""
    _, _, listed = detail.partition(": ")
    return tuple(m.group(1) for m in _QUESTION.finditer(listed))


def scored_answers(store: RunStore, run_ids: Sequence[str] | None = None) -> list[ScoredAnswer]:
    """Every toolmad answer in ``store`` (or in its runs ``run_ids``) whose AR was computed, once per claim and set of questions
    (a rerun's repeats dropped)."""
    found: dict[tuple[str, tuple[str, ...]], ScoredAnswer] = {}
    for run in store.list_runs(limit=100_000, where=RunFilter(protocols=("toolmad",))):
        if run_ids is not None and run.id not in run_ids:
            continue
        events = store.events(run.id)
        claim = next((e.claim for e in events if isinstance(e, RunStarted)), run.claim)
        turns = {e.turn.id for e in events if isinstance(e, TurnCompleted)}
        for e in events:
            if isinstance(e, ScoreComputed) and e.metric == "AR" and e.target in turns and (questions := questions_of(e.detail)):
                found.setdefault((claim, questions), ScoredAnswer(claim, e.target, questions, e.value))
    return list(found.values())


def groups_of(dataset: Dataset) -> dict[str, str]:
    """Each claim's source: Check-COVID writes several claims from one (``ID_0``, ``ID_1``), never set against each other."""
    return {item.claim: item.id.rsplit("_", 1)[0] for item in dataset.items}


def scale(answers: Sequence[ScoredAnswer], groups: Mapping[str, str], embedder: Embedder, *, others: int, seed: int = 0) -> Scale:
    """AR of each answer's questions with its own claim and with ``others`` claims of other groups (``groups``: claim -> group)."""
    rng = random.Random(seed)
    pool = sorted(groups)
    own, other, outranked = [], [], []
    for a in answers:
        mine = groups.get(a.claim, a.claim)
        candidates = [c for c in pool if c != a.claim and groups[c] != mine]
        drawn = rng.sample(candidates, min(others, len(candidates)))
        vectors = embedder.embed([a.claim, *drawn, *a.questions])
        claims, questions = vectors[: 1 + len(drawn)], vectors[1 + len(drawn) :]
        ar = cosine_matrix(claims, questions).mean(axis=1)
        own.append(float(ar[0]))
        other += [float(x) for x in ar[1:]]
        outranked.append(float(np.mean(ar[1:] < ar[0])) if len(drawn) else float("nan"))
    return Scale(tuple(own), tuple(other), tuple(outranked))


def calibrated(result: Scale, false_pass: float) -> float:
    """The lowest multiple of 0.05 at which at most ``false_pass`` of the answers set against other claims pass."""
    for step in range(21):
        threshold = round(step * 0.05, 2)
        if np.mean(np.asarray(result.other) >= threshold) <= false_pass:
            return threshold
    return 1.0


def table(result: Scale, thresholds: Sequence[float]) -> str:
    lines = [
        "| AR at least | answers passing, with their own claim | with another claim of the split |",
        "| ---: | ---: | ---: |",
    ]
    own, other = np.asarray(result.own), np.asarray(result.other)
    for t in thresholds:
        lines.append(f"| {t:g} | {np.mean(own >= t):.2f} ({int(np.sum(own >= t))} of {len(own)}) | {np.mean(other >= t):.3f} |")
    return "\n".join(lines)


def summary(result: Scale) -> str:
    own, other = np.asarray(result.own), np.asarray(result.other)
    q = np.percentile(other, [50, 95, 99]).round(2)
    return (
        f"AR with the answer's own claim: median {statistics.median(result.own):.2f}, lowest {own.min():.2f}\n"
        f"AR with another claim: median {q[0]:.2f}, 95th percentile {q[1]:.2f}, 99th {q[2]:.2f}, highest {other.max():.2f}\n"
        f"share of other claims an answer's own claim outranks: mean {np.nanmean(result.outranked):.3f}, "
        f"lowest {np.nanmin(result.outranked):.2f}"
    )


def main(argv: Sequence[str] | None = None) -> Scale:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data-dir", action="append", required=True, help="a data folder whose runs.sqlite holds toolmad runs (repeatable)"
    )
    parser.add_argument("--split", default="train", help="the Check-COVID split whose other claims are drawn (tune on train)")
    parser.add_argument("--others", type=int, default=50, help="other claims each answer is set against")
    parser.add_argument("--false-pass", type=float, default=0.05, help="the share of answers set against another claim allowed to pass")
    parser.add_argument("--thresholds", default="0.8,0.7,0.6,0.5,0.4", help="AR thresholds to tabulate, comma separated")
    args = parser.parse_args(argv)
    settings = AppSettings()
    answers = [a for d in args.data_dir for a in scored_answers(RunStore(AppSettings(data_dir=Path(d)).sqlite_url))]
    dataset = load_dataset("check-covid", args.split, checkcovid_dir=settings.checkcovid_dir)
    groups = groups_of(dataset)
    print(
        f"{len(answers)} distinct scored answers on {len({a.claim for a in answers})} claims; {len(groups)} {args.split} claims to draw from"
    )
    if not answers:
        raise SystemExit("no toolmad answer with an AR score is stored in these folders")
    result = scale(answers, groups, default_embedder(), others=args.others)
    print(summary(result) + "\n")
    print(table(result, floats(args.thresholds)) + "\n")
    print(
        f"calibrated threshold (at most {args.false_pass:.0%} of answers set against another claim pass): {calibrated(result, args.false_pass):g}"
    )
    return result


if __name__ == "__main__":
    main()
