"""Every protocol on the same Check-COVID claims, claim by claim, each answer kept as a record: resumable, in parts.

    .venv/bin/python bench/protocols.py --records FILE [--protocols desk,single,toolmad,...] [--split dev]
        [--limit N] [--skip M] [--backend embedded|fake] [--set section.field=value ...] [--data-dir DIR] [--out PREFIX]
        [--table-only] [--stages]

The claims are the label-balanced sample of ``--limit N`` (``pipelines/eval``: the sample of a
limit starts with the sample of any smaller one), after its first ``--skip M``; with ``--claims-from RECORDS``, the claims
of an earlier records file in its order (a paired run of the same claims). For each claim,
each protocol runs it as a stored run (web off, corpus ``check-covid``) and one JSON line is
appended to ``--records`` at once: the label, the stated confidence, p(supported) where the
protocol states one, the judge's belief after each round where it was read, the seconds and
tokens. A claim a protocol has already answered in the records file is not run again (a failed
run is, at the next start), so a killed run goes on where it stopped, and a later part
(``--skip``) or a wider ``--protocols`` adds to the same file.

The table is computed from every record in the file for the chosen claims and protocols
(``bench/desk.py``'s figures): binary accuracy, 3-label macro-F1, ECE where a confidence is
stated (``ece`` over every binary claim when each has one; ``ece_stated`` over those with one),
median seconds, tokens read. Run it with ``--limit N --skip N`` and no model to print the table
of the records alone (``--table-only``); ``--stages`` adds where each protocol's model time went,
stage by stage, and how long its runs took to reach each round's belief and the verdict (what a
debate that stopped after round k would have taken), read from the runs stored in ``--data-dir``.

Each protocol runs with the app's defaults: on the embedded model a grounded debate whose verdict no debate could change
is not run (``belief.debate_when`` contested; 159 of 160 Check-COVID dev claims). To measure the debates themselves, add
``--set belief.debate_when=always``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.desk import ROWS, ClaimRecord, add_sample_options, apply_settings, claims_of, records_of, summarise
from bench.desk import table as desk_table
from bench.json_lines import read_json_lines
from pipelines.core.config import AppSettings, RunConfig
from pipelines.core.events import BeliefRead, ModelCallCompleted, StageStarted, VerdictReached
from pipelines.core.machine import describe
from pipelines.eval import metrics
from pipelines.eval.datasets import Dataset, EvalItem, load_dataset
from pipelines.eval.harness import evaluate, evaluation_config, select_items
from pipelines.eval.labels import canonical
from pipelines.protocols.base import protocol_names
from pipelines.record.digest import Cost, RunDigest, digest
from pipelines.record.store import RunStore
from pipelines.run.runner import Services

BINARY = ("SUPPORTS", "REFUTES")
BUSY_LOAD = 3.0  # the 1-minute load either side of a run on this 2-core machine: the bench alone keeps it near 2
EXTRA_ROWS = (
    ("  runs left out of the seconds: they replayed an interrupted run", "replayed"),
    (f"  runs left out of the seconds: the machine's load above {BUSY_LOAD} (other work beside it)", "loaded"),
    ("seconds / claim, desk's reading paid (median)", "seconds_paid_median"),
    ("  runs that read desk's exhibits from its cache", "read_desks"),
    ("last belief: AUC of p(S) - p(R), S vs R", "belief_auc"),
    ("  its likelier side right, S or R claims", "belief_right"),
    ("ECE where stated (binary, 10 bins)", "ece_stated"),
    ("  claims with a stated confidence", "stated"),
    ("failed claims", "failed"),
)


def claims(dataset: Dataset, *, labels: str, limit: int | None, skip: int) -> tuple[EvalItem, ...]:
    """The sample's claims after its first ``skip``: the same ones for the same limit, whatever part is run."""
    sample = select_items(dataset, labels, limit, seed=0)  # type: ignore[arg-type]
    return sample.items[skip:]


def chosen_claims(dataset: Dataset, args: argparse.Namespace) -> tuple[EvalItem, ...]:
    """The claims of this bench's table: those of ``--claims-from``'s records in the file's order (its first ``--limit``),
    else the balanced sample (``--skip`` leaves out the first of them from what is run, not from the table)."""
    if args.claims_from:
        return claims_of(dataset, Path(args.claims_from), binary=args.labels == "binary", limit=args.limit).items
    return claims(dataset, labels=args.labels, limit=args.limit, skip=0)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record in the file (none before the first is written); a line cut short by a killed run is left out."""
    return read_json_lines(path, missing_ok=True)


def answered(records: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    """(protocol, claim id) pairs already in the records, but for failed runs: those are run again at the next start.

    A run fails when the model server went away under it (seen: a rebuild of the server beside the
    bench), and the claim is then not answered at all; its record stays in the file, and the newest
    record of a claim is the one the table counts.
    """
    return {(r["protocol"], r["id"]) for r in records if r.get("status") != "failed"}


def stated_p_supported(label: str | None, confidence: float | None, p_supported: float | None) -> float | None:
    """p(supported) the protocol states: its own (desk), else its confidence in the side it took (none for NOT ENOUGH INFO)."""
    if p_supported is not None:
        return p_supported
    if confidence is None or label not in BINARY:
        return None
    return confidence if label == "SUPPORTS" else 1.0 - confidence


def run_claim(item: EvalItem, dataset: Dataset, services: Services, protocol: str, config: RunConfig) -> dict[str, Any]:
    """One protocol on one claim: the record to append."""
    one = Dataset(dataset.name, dataset.split, (item,), dataset.corpus, dataset.source)
    report = evaluate(one, config, services, labels="three")
    record = records_of(report, one, services)[0]
    row = report.rows[0]
    events = services.store.events(row.run_id) if services.store is not None and row.run_id else []
    ruling = other_ruling(events)
    read = digest(events)
    # p(supported) read off the last aggregation is the verdict's own only when the calibrated reading is the verdict
    own_p = record.p_supported if protocol == "desk" or str(ruling["decided_by"] or "").startswith("calibrated") else None
    return {
        "protocol": protocol,
        **record.__dict__,
        "exhibits": len(record.exhibits),
        "verdict": row.verdict,
        "confidence": row.confidence,
        "status": row.status,
        "error": row.error,
        "run_id": row.run_id,
        "p_stated": stated_p_supported(row.predicted, row.confidence, own_p),
        "beliefs": beliefs_of(events),
        "echoes": echoes_of(read),
        "replayed_calls": replayed_calls(events, protocol) if tried_before(services, row.run_id) else 0,
        **ruling,
        "calls_total": read.cost.calls,
    }


def beliefs_of(events: Sequence[Any]) -> list[dict[str, Any]]:
    """The judge's belief after each round, where the run read it (BeliefRead events)."""
    return [{"round": e.round, "over": e.over, "probabilities": dict(e.probabilities)} for e in events if isinstance(e, BeliefRead)]


def tried_before(services: Services, run_id: str | None) -> bool:
    """Whether this protocol had already started a run of this claim in this data folder (a part killed mid-claim, an earlier variant)."""
    store = services.store
    this = store.get_run(run_id) if store is not None and run_id else None
    if store is None or this is None:
        return False
    return any(r.protocol == this.protocol and r.created_at < this.created_at for r in store.runs_with_claim(this.claim, exclude=this.id))


def _loaded(record: dict[str, Any]) -> bool:
    """The run shared the machine: its load went above BUSY_LOAD, or the records say other work ran beside it."""
    return max([*(record.get("load") or [0.0]), record.get("load_max", 0.0)]) > BUSY_LOAD or bool(record.get("shared_machine"))


class LoadWatch:
    """The most the 1-minute load reached while a block ran, sampled every ``every_s`` seconds on a thread."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self.most = os.getloadavg()[0]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(self.every_s):
            self.most = max(self.most, os.getloadavg()[0])

    def __enter__(self) -> LoadWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.most = max(self.most, os.getloadavg()[0])


def _timed(record: dict[str, Any]) -> bool:
    """A run whose seconds are a claim's: it called the model, read nothing back from an interrupted run, shared no machine."""
    return record.get("calls", 0) > 0 and not record.get("replayed_calls") and not _loaded(record)


SHARED_STAGES = ("negation", "stances", "belief")  # cached by design: desk's reading of the claim, or a prompt asked twice in a run


def replayed_calls(events: Sequence[Any], protocol: str) -> int:
    """Model calls answered from the response cache outside what every run shares: counted where the claim was tried before.

    A bench part killed mid-claim leaves that claim's answered calls in the response cache, and
    the next part's run of it reads them back in no time, so its seconds are low. desk runs
    first on a claim, so any cached call of desk's is such a replay; another protocol's cached
    calls are expected in desk's reading (the claim's opposite, the stances) and in a belief
    prompt asked twice. A run can also ask one prompt twice (a turn copied word for word is
    scored again), so this counts only for a run whose protocol had tried the claim before
    (``tried_before``).
    """
    stage, count = "", 0
    for e in events:
        if isinstance(e, StageStarted):
            stage = e.stage.split(" ")[0]
        elif isinstance(e, ModelCallCompleted) and e.cached and (protocol == "desk" or stage not in SHARED_STAGES):
            count += 1
    return count


def echoes_of(read: RunDigest) -> list[int]:
    """[turns after round 1 that repeat another debater's previous-round turn nearly word for word, turns after round 1]."""
    later = [t for t in read.turns if t.round > 1]
    return [sum(t.id in read.echoes for t in later), len(later)]


def other_ruling(events: Sequence[Any]) -> dict[str, Any]:
    """The ruling kept beside the verdict (the debate's own, or the calibrated one), as the records keep it."""
    verdict = next((e.verdict for e in events if isinstance(e, VerdictReached)), None)
    beside = verdict.beside if verdict is not None else None
    if verdict is None or beside is None:
        return {"decided_by": verdict.decided_by if verdict else None, "beside": None}
    return {
        "decided_by": verdict.decided_by,
        "beside": {"label": canonical(beside.label), "confidence": beside.confidence, "decided_by": beside.decided_by, "says": beside.says},
    }


def column(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One protocol's figures over its records."""
    as_claims = [
        ClaimRecord(
            **{k: v for k, v in r.items() if k in ClaimRecord.__dataclass_fields__} | {"exhibits": [], "p_supported": r["p_stated"]}
        )
        for r in records
    ]
    figures = summarise(as_claims, ceiling=float("nan"))
    stated = [c for c in as_claims if c.gold in BINARY and c.binary_confidence is not None]
    figures["ece_stated"] = (
        metrics.expected_calibration_error([c.binary_confidence for c in stated], [c.binary == c.gold for c in stated], 10)
        if stated
        else None
    )
    figures["stated"] = len(stated)
    figures |= last_belief(records)
    # seconds only of runs that read nothing back from an interrupted run (their seconds are a fraction of a claim's)
    # and did not share the machine with other work (their seconds are up to twice a claim's)
    timed = [r["seconds"] for r in records if _timed(r)]
    figures["seconds_median"] = statistics.median(timed) if timed else None
    figures["seconds_mean"] = statistics.fmean(timed) if timed else None
    figures["seconds_max"] = max(timed, default=None)
    figures["replayed"] = sum(bool(r.get("replayed_calls")) for r in records)
    figures["loaded"] = sum(_loaded(r) for r in records)
    figures["failed"] = sum(r.get("status") != "completed" for r in records)
    return figures


def last_belief(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How well each run's last belief reading told SUPPORTS claims from REFUTES ones: the AUC of p(S) - p(R), and the likelier side.

    The belief is a reading beside the verdict; this says whether its chart can be read for
    the side on these claims. None without readings on claims of both labels.
    """
    read = [(r["beliefs"][-1]["probabilities"], r["gold"] == "SUPPORTS") for r in records if r.get("beliefs") and r["gold"] in BINARY]
    if len({truth for _, truth in read}) < 2:
        return {"belief_auc": None, "belief_right": None}
    gaps = [p["SUPPORTS"] - p["REFUTES"] for p, _ in read]
    truths = [truth for _, truth in read]
    right = sum(g > 0 if t else g < 0 for g, t in zip(gaps, truths, strict=True))  # a tie takes no side
    return {"belief_auc": metrics.auc(gaps, truths), "belief_right": f"{right} of {len(read)}"}


def table(columns: dict[str, dict[str, Any]]) -> str:
    """desk's table of figures, without its 3-label ceiling, with the rows only this bench measures after it."""
    return desk_table(columns, (*[r for r in ROWS if r[1] != "ceiling_3"], *EXTRA_ROWS))


def run_part(
    items: Sequence[EvalItem],
    dataset: Dataset,
    services: Services,
    protocols: Sequence[str],
    records_path: Path,
    *,
    backend: str,
    settings: Sequence[str] = (),
    quiet: bool = False,
) -> int:
    """Each claim through each protocol not yet in the records; returns how many answers were added."""
    done = answered(read_records(records_path))
    configs = {
        p: apply_settings(evaluation_config(RunConfig(), protocol=p, backend=backend, corpus="check-covid"), settings) for p in protocols
    }
    records_path.parent.mkdir(parents=True, exist_ok=True)
    machine = describe()
    added = 0
    for item in items:
        for protocol in protocols:
            if (protocol, item.id) in done:
                continue
            load_before = os.getloadavg()[0]
            with LoadWatch() as watch:
                record = run_claim(item, dataset, services, protocol, configs[protocol])
            # the machine's 1-minute load either side, and the most it reached while the run ran (sampled every few
            # seconds: work that came and went inside a long run shows here), so seconds beside other work can be told apart
            record["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
            record["load_max"] = round(watch.most, 2)
            record["machine"] = machine  # seconds of different machines are not one sample
            with records_path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
            added += 1
            if not quiet:
                print(
                    f"  {protocol} {item.id} gold {item.label} -> {record['predicted']} {record['seconds']:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
    return added


def newest_records(records: Sequence[dict[str, Any]], ids: set[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (protocol, claim)'s newest record among the chosen claims: a claim run again counts by its last run."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        if r["id"] in ids:
            latest[(r["protocol"], r["id"])] = r
    return latest


def columns_of(records: Sequence[dict[str, Any]], protocols: Sequence[str], ids: set[str]) -> dict[str, dict[str, Any]]:
    """Each protocol's figures over its records of the chosen claims (the newest record of a claim counts).

    Where every run of a protocol kept a second ruling beside its verdict (belief.verdict), a
    column ``PROTOCOL/beside`` scores that one on the same claims: the debate's own ruling when
    the calibrated one was the verdict, or the other way round.
    """
    latest = newest_records(records, ids)
    desk_seconds = {i: r["seconds"] for (q, i), r in latest.items() if q == "desk"}
    columns: dict[str, dict[str, Any]] = {}
    for p in protocols:
        mine = [r for (q, _), r in latest.items() if q == p]
        if not mine:
            continue
        columns[p] = column(mine) | paid_seconds(mine, desk_seconds)
        if all(r.get("beside") for r in mine):  # the ruling kept beside the verdict, scored on the same claims
            columns[f"{p}/beside"] = column([as_beside(r) for r in mine])
    return columns


def paid_seconds(records: Sequence[dict[str, Any]], desk_seconds: dict[str, float]) -> dict[str, Any]:
    """The median seconds a claim would take without the response cache's help from desk's run on it.

    The bench runs desk first on each claim, so a debate that starts from desk's exhibits (or
    rules on them) reads their stances from the response cache, and its seconds leave out what
    a fresh claim pays. A run with cached calls is counted with desk's seconds on the claim
    added: an estimate a little high (desk's seconds include its own belief reading), where the
    plain median is low. Without desk's records nothing can be added, and the figure is None.
    """
    live = [r for r in records if _timed(r)]  # as the seconds rows
    helped = {r["id"] for r in live if r.get("cached_calls", 0) > 0}
    if not live or not helped <= desk_seconds.keys():
        return {"seconds_paid_median": None, "read_desks": len(helped)}
    paid = [r["seconds"] + (desk_seconds[r["id"]] if r["id"] in helped else 0.0) for r in live]
    return {"seconds_paid_median": statistics.median(paid), "read_desks": len(helped)}


def machines_line(records: Sequence[dict[str, Any]]) -> str:
    """Which machines ran the records, with how many each: seconds of different machines are not one sample."""
    counts: dict[str, int] = {}
    for r in records:
        name = machine_name(r)
        counts[name] = counts.get(name, 0) + 1
    return "Records by machine: " + "; ".join(f"{name}: {n}" for name, n in counts.items()) if counts else "No records."


def machine_name(record: dict[str, Any]) -> str:
    m = record.get("machine")
    return f"{m.get('cpu') or 'CPU not said'}, {m.get('cores')} cores, boot {m.get('boot') or '?'}" if m else "machine not recorded"


def machines_seconds_table(records: Sequence[dict[str, Any]], protocols: Sequence[str], ids: set[str]) -> str:
    """Each protocol's median seconds a claim on each machine that timed its runs, with how many runs: "" when one machine did.

    The main table's seconds pool every machine's runs; when the claims were run in parts on
    machines of different speeds, this says how much of the pool each one is.
    """
    seconds: dict[tuple[str, str], list[float]] = {}  # (machine, protocol): its timed runs' seconds
    for (p, _), r in newest_records(records, ids).items():
        if p in protocols and _timed(r):
            seconds.setdefault((machine_name(r), p), []).append(r["seconds"])
    machines = list(dict.fromkeys(name for name, _ in seconds))
    if len(machines) < 2:
        return ""
    lines = ["| machine | " + " | ".join(f"`{p}`" for p in protocols) + " |", "| --- |" + " ---: |" * len(protocols)]
    for name in machines:
        found = [seconds.get((name, p), []) for p in protocols]
        lines.append(f"| {name} | " + " | ".join(f"{statistics.median(s):.1f} ({len(s)})" if s else "n/a" for s in found) + " |")
    return "\n".join(lines)


def stage_table(records: Sequence[dict[str, Any]], store: RunStore, protocols: Sequence[str], ids: set[str]) -> str:
    """Where each protocol's model time goes, from its runs' own events: per stage, the median model seconds a claim.

    A stage's medians are over the runs that had it (a stage some claims skip, as a debate that
    stopped early, is not pulled to zero by the others); the runs found in ``store`` are counted,
    as records whose runs are elsewhere have no events here. Calls made outside any open stage
    are grouped by role (``digest``'s ``by_stage``, as the run's page reads it). Model seconds are the calls' own
    seconds summed, so calls in flight together (toolmad's two scores of an answer) each count theirs: a protocol's
    total can pass its wall time.
    """
    latest = newest_records(records, ids)
    lines = [
        "| protocol | stage | model s (median) | calls (median) | tokens written (median) | runs with it |",
        "| --- | --- |" + " ---: |" * 4,
    ]
    for p in protocols:
        mine = [r for (q, _), r in latest.items() if q == p]
        reads = [digest(events) for events in (store.events(r["run_id"]) for r in mine if r.get("run_id")) if events]
        if not reads:
            continue
        stages: dict[str, list[Cost]] = {}
        for read in reads:
            for name, cost in read.by_stage.items():
                stages.setdefault(name, []).append(cost)
        total = statistics.median(read.cost.model_seconds for read in reads)
        lines.append(f"| `{p}` | all, {len(reads)} of {len(mine)} runs found | {total:.0f} | | | {len(reads)} |")
        for name, found in sorted(stages.items(), key=lambda kv: -sum(c.model_seconds for c in kv[1])):
            seconds = statistics.median(c.model_seconds for c in found)
            calls = statistics.median(c.calls for c in found)
            written = statistics.median(c.tokens_out for c in found)
            lines.append(f"| `{p}` | {name} | {seconds:.0f} | {calls:g} | {written:g} | {len(found)} |")
    return "\n".join(lines)


def round_table(records: Sequence[dict[str, Any]], store: RunStore, protocols: Sequence[str], ids: set[str]) -> str:
    """What a debate that stopped after round k would have taken: per protocol, the median seconds from a run's start.

    Read from the stored runs' own events: the belief read after round k (``BeliefRead``, round 0
    before any argument) marks where a debate stopping there would hand over to its ruling, and
    the verdict marks the whole run. A row's median is over the runs that reached it, counted
    beside it; runs stored without per-round belief (``belief.per_round`` off) have no round rows.
    """
    latest = newest_records(records, ids)
    lines = ["| protocol | reached | runs | seconds from the start (median) |", "| --- | --- | ---: | ---: |"]
    for p in protocols:
        runs = [events for events in (store.events(r["run_id"]) for (q, _), r in latest.items() if q == p and r.get("run_id")) if events]
        reached: dict[int, list[float]] = {}
        verdicts: list[float] = []
        for events in runs:
            start = events[0].at
            after = {e.round: e.at - start for e in events if isinstance(e, BeliefRead)}  # a round read twice: its last reading
            for k, seconds in after.items():
                reached.setdefault(k, []).append(seconds)
            verdicts += [e.at - start for e in events if isinstance(e, VerdictReached)][-1:]
        for k, found in sorted(reached.items()):
            where = "before any argument" if k == 0 else f"belief after round {k}"
            lines.append(f"| `{p}` | {where} | {len(found)} | {statistics.median(found):.0f} |")
        if verdicts:
            lines.append(f"| `{p}` | verdict | {len(verdicts)} | {statistics.median(verdicts):.0f} |")
    return "\n".join(lines)


def as_beside(record: dict[str, Any]) -> dict[str, Any]:
    """The record as if the ruling beside the verdict had been the verdict."""
    beside = record["beside"]
    p = stated_p_supported(beside["label"], beside["confidence"], None)
    return {**record, "predicted": beside["label"], "p_stated": p}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", required=True, help="JSON lines, one per protocol and claim; appended to, and read to resume")
    parser.add_argument("--protocols", default=",".join(protocol_names()))
    add_sample_options(parser, limit=30)
    parser.add_argument("--table-only", action="store_true", help="print the table of the records, run nothing")
    parser.add_argument("--out", default="", help="write the table to OUT.md and the figures to OUT-summary.json")
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also print where the model time went, stage by stage, and the seconds to each round (--data-dir's runs)",
    )
    args = parser.parse_args()
    if args.dataset != "check-covid" or args.corpus:
        parser.error("this bench runs Check-COVID claims on the check-covid corpus: --dataset and --corpus are bench/desk.py's")

    data_dir = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="protocols-bench-"))
    settings = AppSettings(data_dir=data_dir)
    dataset = load_dataset("check-covid", args.split, checkcovid_dir=settings.checkcovid_dir)
    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    all_items = chosen_claims(dataset, args)
    items = all_items[args.skip :]
    records_path = Path(args.records)
    if not args.table_only:
        services = Services.create(settings)
        run_part(items, dataset, services, protocols, records_path, backend=args.backend, settings=args.set)
    records = read_records(records_path)
    ids = {i.id for i in all_items}
    columns = columns_of(records, protocols, ids)
    which = (
        f"the {len(all_items)} claims of {args.claims_from}"
        if args.claims_from
        else f"the first {len(all_items)} claims of the balanced sample"
    )
    text = f"Check-COVID {args.split}, {args.backend}, {which}\n\n{table(columns)}\n"
    text += f"\n{machines_line(records)}\n"
    if by_machine := machines_seconds_table(records, protocols, ids):
        text += f"\nSeconds / claim (median) by machine, with the runs timed on it\n\n{by_machine}\n"
    if args.stages:
        store = RunStore(settings.sqlite_url)
        text += f"\nModel time by stage\n\n{stage_table(records, store, protocols, ids)}\n"
        text += f"\nTime by round\n\n{round_table(records, store, protocols, ids)}\n"
    print(text)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".md").write_text(text)
        out.with_name(f"{out.name}-summary.json").write_text(json.dumps(columns, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
