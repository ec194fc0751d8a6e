"""Calibrating desk for any model a desk brings: desk's reading of labelled claims as stored runs, the fit, its scores, a version kept.

1. **The probe**: one call asks the judge's endpoint for token probabilities. Without them desk
   samples each answer (``SAMPLES`` calls a reading instead of 1), and the plan says what
   that costs before anything runs.
2. **The readings**: desk runs on each labelled claim as a normal stored run. A claim already
   read by a completed run with the same model and desk settings is not read again, and a
   run cut short (the model server went away, the process stopped) is resumed from its
   journal, so calling again goes on where the last call stopped. Spend limits hold for the
   whole calibration (the batch limits), and for each run.
3. **The fit** (``pipelines.calibration.fitting``): p(supported) from the stance features,
   cross-validated on the claims read. Where the readings cannot tell the labels apart
   (cross-validated AUC below ``NO_SIGNAL_AUC``) nothing is saved: the model cannot check
   claims of this kind, and a calibration would only look confident.
4. **The version** (``pipelines.calibration.files``): kept in the data folder with what it
   was fitted on; desk uses it from the next run on. Only an editor calibrates, refits or
   rolls back on a shared desk (``require_role``: checked here, where the action happens).

The labelled set is Check-COVID (train by default), any labelled JSONL file
(``eval.datasets``), or the desk's own reviewed claims (``REVIEWED``): runs whose verdict an
editor overrode with SUPPORTS or REFUTES on History, or whose queued claim an editor reviewed as
SUPPORTED or REFUTED (the run the review rests on). On those, ``compare_refit`` sets the calibration in
use against one refitted on them, both cross-validated on the same claims.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage

from pipelines.calibration import fitting
from pipelines.calibration.files import (
    SHIPPED,
    Calibration,
    CalibrationShelf,
    Version,
    belief_prompt_sha,
    calibration_key,
    load_calibration,
    prompt_sha,
)
from pipelines.core.config import RunConfig
from pipelines.core.domain import Label
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import BeliefRead, Event, ExhibitStanceRead
from pipelines.core.text.times import duration
from pipelines.core.text.urls import scrub_url
from pipelines.eval import metrics
from pipelines.eval.datasets import CHECK_COVID, load_dataset
from pipelines.eval.labels import canonical
from pipelines.newsroom.access.roles import ALLOWED, require_role
from pipelines.newsroom.access.users import User
from pipelines.protocols.base import exhibit_reader
from pipelines.record.digest import digest
from pipelines.record.store import RunStore, RunSummary
from pipelines.run.batch import BatchItem, run_claim
from pipelines.run.llm.client import LLM
from pipelines.run.llm.limits import Budget, describe_stop
from pipelines.run.llm.registry import get_backend
from pipelines.run.runner import check_names, resume_run
from pipelines.run.services import Services
from pipelines.run.wiring import probability_spec
from pipelines.stages.exhibit_reading import exhibit_settings
from pipelines.stages.stance import CONTRAST_ORDERS_MIXED, STANCES, Stance, reads_opposite, takes_shots
from pipelines.stages.stance_aggregation import stance_features

log = logging.getLogger("debatedesk.access")

FEATURES = ("net", "gap", "top")
REVIEWED = "reviewed"  # the labelled set of the desk's own claims with an editor's verdict
DEFAULT_REFIT_AT = 50  # reviewed claims needed before an editor can refit on them
SAMPLES = 5  # answers sampled for one reading where the endpoint gives no token probabilities (stages.stance's default)
GIVE_UP_AFTER = 3  # claims failing one after another: the model server is gone, stop and say so
BINARY: tuple[Label, ...] = ("SUPPORTS", "REFUTES")


class CalibrationError(DebateDeskError):
    """A calibration that cannot start or go on; the message says why and what to do."""


# --- 1. the labelled set ------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledClaim:
    """One claim to read, its gold label, and the run that already read it (the desk's own reviewed claims)."""

    id: str
    claim: str
    label: Label
    run_id: str = ""  # a reviewed run: its readings are used as they are when its model and settings match
    corpus: str = ""  # the corpus its run searched ('' : the calibration's)


@dataclass(frozen=True)
class LabelledSet:
    """The claims a calibration reads (SUPPORTS/REFUTES), and what the NOT ENOUGH INFO threshold is chosen on."""

    name: str  # what the calibration records it was fitted on
    claims: tuple[LabelledClaim, ...]
    three_labels: tuple[tuple[str, str], ...] = ()  # (claim text, gold label) of every claim, NOT ENOUGH INFO included
    corpus: str = ""


def labelled_set(
    source: str, *, limit: int | None, settings_checkcovid: Path | None, store: RunStore | None = None, split: str = "train", seed: int = 0
) -> LabelledSet:
    """``check-covid`` (its ``split``), a labelled JSONL file, or ``reviewed``: the desk's own claims with an editor's verdict."""
    if source == REVIEWED:
        if store is None:
            raise CalibrationError("the desk's reviewed claims live in the run store; this desk runs without one")
        claims = reviewed_claims(store)
        picked = tuple(claims[:limit] if limit else claims)
        return LabelledSet(f"the desk's reviewed claims: {_counted(picked)}", picked, tuple((c.claim, c.label) for c in picked))
    dataset = load_dataset(source, split, checkcovid_dir=settings_checkcovid)
    binary = [i for i in dataset.items if i.label in BINARY]
    if not binary:
        raise CalibrationError(f"{source}: no SUPPORTS or REFUTES claims to calibrate on")
    from pipelines.eval.datasets import sample_items

    picked_items = sample_items(binary, limit, seed)
    picked = tuple(LabelledClaim(i.id, i.claim, i.label) for i in picked_items)
    where = f"Check-COVID {split}" if source == CHECK_COVID else Path(dataset.source).name
    return LabelledSet(
        f"{where}: {_counted(picked)}",
        picked,
        tuple((" ".join(i.claim.split()), i.label) for i in dataset.items),
        corpus=dataset.corpus or "",
    )


def reviewed_claims(store: RunStore) -> list[LabelledClaim]:
    """The desk's claims an editor gave SUPPORTS or REFUTES: an override on History, or a review on the claims queue (resting on
    one of this desk's runs). The latest of either for each claim's text counts; an imported run's never does."""
    from pipelines.newsroom.queue import ClaimQueue  # the queue's tables live in the same database

    found: dict[str, LabelledClaim] = {}
    latest: dict[str, float] = {}

    def keep(run: RunSummary, verdict: str, at: float) -> None:
        label = canonical(verdict)
        if label not in BINARY or run.origin != "run":
            return
        text = " ".join(run.claim.split())
        if text not in latest or at > latest[text]:
            latest[text] = at
            found[text] = LabelledClaim(run.id, run.claim, label, run_id=run.id, corpus=str(run.config.get("corpus", "")))  # type: ignore[arg-type]

    for run in store.list_runs(limit=100_000):
        if run.checker_verdict:
            keep(run, run.checker_verdict, run.checker_at or run.created_at)
    for _text, verdict, run_id, at in ClaimQueue(store.engine).reviews():
        reviewed_run = store.get_run(run_id)
        if reviewed_run is not None:
            keep(reviewed_run, verdict, at)
    return sorted(found.values(), key=lambda c: latest[" ".join(c.claim.split())])


def _counted(claims: Sequence[LabelledClaim]) -> str:
    supported = sum(c.label == "SUPPORTS" for c in claims)
    return f"{len(claims)} SUPPORT/REFUTE claims ({supported} SUPPORT)"


# --- 2. the probe and the plan --------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """What one call told about the judge's endpoint."""

    model: str
    logprobs: bool
    answer: str = ""


def judge_model_name(config: RunConfig) -> str:
    """The judge's model as desk names it (and keys its calibration by)."""
    spec = config.role("judge")
    backend = get_backend(spec.backend)
    return spec.model or backend.default_model or backend.name


def probe(config: RunConfig, services: Services) -> Probe:
    """One short call to the judge's endpoint asking for token probabilities: does it give them?

    Raises ``CalibrationError`` when the endpoint does not answer at all, before anything else runs.
    """
    import asyncio

    spec = probability_spec(config.role("judge"))
    name = judge_model_name(config)
    try:
        chat = services.chat_model(spec)
        llm = LLM(chat, role="judge", model_name=name, max_retries=0, params={"base_url": spec.base_url})
        question = [
            SystemMessage(content="Answer with one letter."),
            HumanMessage(content="Which letter comes first in the alphabet?\nOptions: A | B | C\nAnswer:"),
        ]
        reply = asyncio.run(llm.reply(question, logprobs=True, top_logprobs=5, max_tokens=1, temperature=0.0))
    except DebateDeskError as exc:
        raise CalibrationError(f"the judge's model ({name}) did not answer a first short call: {exc}") from exc
    except Exception as exc:  # a connection refused, a bad address, an unknown model: said plainly, before any claim is read
        raise CalibrationError(f"the judge's model ({name}) did not answer a first short call: {type(exc).__name__}: {exc}") from exc
    return Probe(model=name, logprobs=reply.has_logprobs, answer=reply.text[:20])


def readings_per_exhibit(config: RunConfig) -> int:
    """The one-token questions desk asks of each exhibit with these settings."""
    cfg = exhibit_settings(config)
    separate = cfg.orders * (2 if cfg.negation else 1)
    return {"contrast": cfg.orders, "verdict": cfg.orders, "separate": separate, "both": separate + CONTRAST_ORDERS_MIXED}[cfg.reader]


def calls_per_claim(config: RunConfig, *, logprobs: bool) -> int:
    """At most this many model calls a claim (a debate over conflicting exhibits adds a few)."""
    cfg = exhibit_settings(config)
    readings = cfg.exhibits * readings_per_exhibit(config) * (1 if logprobs else SAMPLES)
    return readings + 1 + cfg.rewrites  # the claim's opposite, its rewrites


def cost_note(probe_result: Probe, config: RunConfig, claims: int) -> str:
    """What reading ``claims`` claims will cost with this endpoint, said before anything runs."""
    per = calls_per_claim(config, logprobs=probe_result.logprobs)
    if probe_result.logprobs:
        return f"{probe_result.model} gives token probabilities: each reading is one call, about {per} calls a claim, {per * claims:,} for {claims} claims."
    with_them = calls_per_claim(config, logprobs=True)
    return (
        f"{probe_result.model} gives no token probabilities: each of desk's answers is sampled {SAMPLES} times and counted, "
        f"so a claim takes about {per} calls instead of {with_them} ({per * claims:,} for {claims} claims), "
        "and the stances are coarser (steps of 1/5)."
    )


# --- 3. the readings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """One labelled claim as desk read it: its round-1 stances, and the run they come from."""

    claim: LabelledClaim
    run_id: str
    stances: tuple[Stance, ...]
    how: Literal["read", "resumed", "stored"]
    seconds: float = 0.0

    @property
    def features(self) -> dict[str, float]:
        return stance_features(self.stances)


@dataclass(frozen=True)
class Progress:
    """Where a calibration's readings are: claims done of all, and an estimate of the time left."""

    done: int
    total: int
    stored: int  # read before (by an earlier call), not read again
    failed: int
    seconds_left: float | None  # None until a claim has been read here
    last: str = ""  # the last claim's outcome, for a log line

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def eta(self) -> str:
        if self.seconds_left is None:
            return "time left: known after the first claim"
        return f"about {duration(self.seconds_left)} left"


ProgressListener = Callable[[Progress], None]


def stance_from_event(event: ExhibitStanceRead) -> Stance:
    """An exhibit's stance as a stored run recorded it."""
    per_order = tuple({s: float(p.get(s, 0.0)) for s in STANCES} for p in event.per_order)
    return Stance(
        exhibit_id=event.evidence_id,
        probabilities={s: float(event.probabilities.get(s, 0.0)) for s in STANCES},  # type: ignore[misc]
        per_order=per_order,  # type: ignore[arg-type]
        method=event.method,
    )


def round_one_stances(events: Sequence[Event]) -> tuple[Stance, ...]:
    return tuple(stance_from_event(e) for e in events if isinstance(e, ExhibitStanceRead) and e.round == 1)


def reading_signature(config: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two runs' readings the same: the judge's backend and model, desk's settings and the search.

    Not the endpoint's address: the same model served on another port (the server restarted) reads the same.
    """
    judge = config.get("judge") or {}
    retrieval = config.get("retrieval") or {}
    return (
        config.get("protocol"),
        judge.get("backend"),
        judge.get("model"),
        tuple(sorted((config.get(exhibit_reader()) or {}).items())),
        config.get("corpus"),
        bool(retrieval.get("web_search")),
    )


def _matching_runs(store: RunStore, claim: LabelledClaim, signature: tuple[Any, ...]) -> list[RunSummary]:
    found = [r for r in store.runs_with_claim(claim.claim) if r.origin == "run" and reading_signature(r.config) == signature]
    if claim.run_id and all(r.id != claim.run_id for r in found):
        own = store.get_run(claim.run_id)
        if own is not None and reading_signature(own.config) == signature:
            found.append(own)
    return found


def read_claims(
    claims: Sequence[LabelledClaim],
    config: RunConfig,
    services: Services,
    *,
    on_progress: ProgressListener | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> tuple[list[Reading], str, int]:
    """Desk's reading of every claim, as stored runs: reused, resumed or read anew.

    Returns the readings, why it stopped short ('' when it did not) and how many claims failed.
    """
    store = services.store
    if store is None:
        raise CalibrationError("calibrating keeps its readings as runs in the run store; this desk runs without one")
    store.reconcile()
    spend = Budget.for_batch(config.budget) if config.budget.limits_batch else None
    readings: list[Reading] = []
    failed = 0
    in_a_row = 0
    spent: list[float] = []
    stopped = ""
    for done, claim in enumerate(claims, start=1):
        if should_stop():
            stopped = "stopped before all claims were read: what was read is kept, and the next call goes on from there"
            break
        limit = spend.reached() if spend is not None else None
        if limit is not None:
            stopped = f"{describe_stop(limit)}: {len(claims) - done + 1} claims not read (raise the limit and call again to go on)"
            break
        run_config = config.model_copy(update={"corpus": claim.corpus}) if claim.corpus else config
        started = time.perf_counter()
        reading, error = _read_one(claim, run_config, services, store, spend)
        if reading is not None:
            readings.append(reading)
            in_a_row = 0
            if reading.how != "stored":
                spent.append(time.perf_counter() - started)
            outcome = f"{reading.how}: {claim.id}"
        else:
            failed += 1
            in_a_row += 1
            outcome = f"failed: {claim.id}: {error}"
        left = len(claims) - done
        estimate = (sum(spent) / len(spent)) * left if spent else None
        if on_progress is not None:
            on_progress(Progress(done, len(claims), sum(r.how == "stored" for r in readings), failed, estimate, outcome))
        if in_a_row >= GIVE_UP_AFTER:
            stopped = (
                f"the last {in_a_row} claims failed ({error}); the model server may be down. What was read is kept: "
                "start the server again and call again to go on"
            )
            break
    return readings, stopped, failed


def _read_one(
    claim: LabelledClaim, config: RunConfig, services: Services, store: RunStore, spend: Budget | None
) -> tuple[Reading | None, str]:
    signature = reading_signature(config.snapshot())
    runs = _matching_runs(store, claim, signature)
    completed = [r for r in runs if r.status == "completed"]
    if completed:
        run = completed[0]
        stances = round_one_stances(store.events(run.id))
        if not stances:  # read before and found nothing: reading it again would find nothing again
            return None, "no exhibit was found for the claim: nothing to calibrate on (is the corpus indexed?)"
        return Reading(claim, run.id, stances, "stored"), ""
    resumable = [r for r in runs if r.resumable]  # a run stopped by a spend limit goes on once the limit is raised
    if resumable:
        started = time.perf_counter()
        try:
            events = list(resume_run(resumable[0].id, services, secrets_from=config).stream())
        except DebateDeskError as exc:
            return None, str(exc)
        return _finished(claim, resumable[0].id, events, "resumed", time.perf_counter() - started)
    outcome = run_claim(BatchItem(index=0, id=claim.id, claim=claim.claim), config, services, spend)
    if outcome.status != "completed" or outcome.run_id is None:
        return None, outcome.error or outcome.status
    return _finished(claim, outcome.run_id, store.events(outcome.run_id), "read", outcome.seconds)


def _finished(
    claim: LabelledClaim, run_id: str, events: Sequence[Event], how: Literal["read", "resumed"], seconds: float
) -> tuple[Reading | None, str]:
    run = digest(events)
    if run.verdict is None:
        return None, run.failure or run.interruption or "the run ended without a verdict"
    stances = round_one_stances(events)
    if not stances:
        return None, "no exhibit was found for the claim: nothing to calibrate on (is the corpus indexed?)"
    return Reading(claim, run_id, stances, how, seconds), ""


# --- 4. the fit ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fitted:
    """A fit on the claims read, and the calibration it makes (None when the readings cannot tell the labels apart)."""

    fit: fitting.Fit
    calibration: Calibration | None
    refused: str  # why nothing is saved ('' when it may be)
    reliability: metrics.Calibration  # the cross-validated reliability diagram's bins
    decide_at_from: str


def design(readings: Sequence[Reading], names: Sequence[str] = FEATURES) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[r.features[n] for n in names] for r in readings], dtype=float).reshape(len(readings), len(names))
    y = np.array([1.0 if r.claim.label == "SUPPORTS" else 0.0 for r in readings])
    return x, y


def fit_readings(
    readings: Sequence[Reading],
    config: RunConfig,
    labelled: LabelledSet,
    *,
    logprobs: bool,
    current: Calibration | None = None,
    names: Sequence[str] = FEATURES,
) -> Fitted:
    """The calibration for these readings, cross-validated; refused where the readings cannot tell the labels apart."""
    if len(readings) < fitting.FOLDS * 2:
        raise CalibrationError(f"only {len(readings)} claims were read; a calibration needs at least {fitting.FOLDS * 2}, of both labels")
    x, y = design(readings, names)
    try:
        result = fitting.fit(x, y, names)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from exc
    p = np.array(result.predicted)
    reliability = metrics.calibration(np.maximum(p, 1 - p).tolist(), ((p >= 0.5) == (y == 1)).tolist(), 10)
    name = judge_model_name(config)
    key = calibration_key(name, exhibit_settings(config).reader)
    decide_at, decide_at_from = _decide_at(readings, result, labelled, current)
    if not result.separates:
        refused = (
            f"{name} cannot check claims of this kind: on these {len(readings)} claims its readings do not tell supported from refuted "
            f"(cross-validated AUC {result.cross_validated['auc']:.2f}; 0.5 is chance). No calibration was saved, so desk "
            "will not show a confident-looking probability for it; a stronger model is the remedy."
        )
        return Fitted(result, None, refused, reliability, decide_at_from)
    cfg = exhibit_settings(config)
    judge = config.role("judge")
    calibration = Calibration(
        name=f"{key}@new",
        model=name,
        bias=round(result.bias, 6),
        weights={n: round(w, 6) for n, w in zip(names, result.weights, strict=True)},
        decide_at=decide_at,
        prompt_sha=prompt_sha(cfg.reader),
        fitted_on=labelled.name if len(readings) == len(labelled.claims) else f"{labelled.name}, {len(readings)} of them read",
        settings={
            "exhibits": cfg.exhibits,
            "orders": cfg.orders,
            "unit": cfg.unit,
            "reader": cfg.reader,
            "negation": reads_opposite(cfg),  # as desk reads it
            "shots": cfg.shots if takes_shots(cfg.reader) else 0,
            **({"contrast_share": cfg.contrast_share} if cfg.reader == "both" else {}),
            "cross_validated": {k: round(v, 4) for k, v in result.cross_validated.items()},
            # Where this reader was measured (pipelines/calibration/ground.py): this desk's claims, on the corpus it searched.
            "measured_on": [
                {
                    "corpus": config.corpus,
                    "what": f"{labelled.name} on the corpus {config.corpus} (this desk's claims, cross-validated)",
                    "claims": len(readings),
                    **{k: round(result.cross_validated[k], 4) for k in ("auc", "accuracy", "ece") if k in result.cross_validated},
                }
            ],
            "decide_at_from": decide_at_from,
            "endpoint": {"backend": judge.backend, "model": judge.model, "base_url": scrub_url(judge.base_url)},
            "logprobs": logprobs,
            "runs": [r.run_id for r in readings],
        },
    )
    return Fitted(result, calibration, "", reliability, decide_at_from)


def _decide_at(readings: Sequence[Reading], result: fitting.Fit, labelled: LabelledSet, current: Calibration | None) -> tuple[float, str]:
    """The least confidence for a side: chosen on the set's NOT ENOUGH INFO claims where it has some with the read claims' text, else kept."""
    texts = {" ".join(r.claim.claim.split()) for r in readings}
    if any(label == "NOT ENOUGH INFO" and text in texts for text, label in labelled.three_labels):
        x = np.array([[r.features[n] for n in result.names] for r in readings], dtype=float)
        q = fitting.predict(result.bias, np.array(result.weights), x)
        q_by_claim = {" ".join(r.claim.claim.split()): float(v) for r, v in zip(readings, q, strict=True)}
        decide_at, f1 = fitting.best_decide_at(q_by_claim, labelled.three_labels)
        return decide_at, f"3-label macro-F1 {f1:.3f} on the set's claims"
    if current is not None:
        return current.decide_at, f"kept from {current.name} (the set has no NOT ENOUGH INFO claims to choose it on)"
    return 0.5, "0.5: the set has no NOT ENOUGH INFO claims to choose it on, so every verdict takes a side"


# --- 5. the whole flow ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a calibration will do, said before it runs."""

    config: RunConfig
    labelled: LabelledSet
    probe: Probe
    key: str
    cost: str


@dataclass(frozen=True)
class Outcome:
    """What a calibration did: the readings, the fit, the version kept (or why none was), and why it stopped short."""

    plan: Plan
    readings: tuple[Reading, ...]
    fitted: Fitted | None
    saved: Version | None
    stopped: str = ""
    failed: int = 0
    messages: tuple[str, ...] = field(default=())


def belief_separation(readings: Sequence[Reading], store: RunStore) -> dict[str, Any] | None:
    """How well the judge's belief over each claim's exhibits alone (desk's first reading) told supported from refuted claims.

    The AUC of p(supported) - p(refuted) between the labels, over the readings whose runs read
    the belief (None without both labels among them); kept with the calibration and its belief
    prompt's hash, and said under every belief chart of the model (stages/belief.py).
    """
    gaps: list[float] = []
    supported: list[bool] = []
    for reading in readings:
        events = store.events(reading.run_id)
        first = next((e for e in events if isinstance(e, BeliefRead) and e.round == 0 and e.method != "exhibits"), None)
        if first is None:
            continue
        gaps.append(first.probabilities.get("SUPPORTS", 0.0) - first.probabilities.get("REFUTES", 0.0))
        supported.append(reading.claim.label == "SUPPORTS")
    if len(set(supported)) < 2:
        return None
    return {"auc": round(metrics.auc(gaps, supported), 4), "claims": len(gaps), "prompt_sha": belief_prompt_sha()}


def calibration_config(config: RunConfig, *, corpus: str = "") -> RunConfig:
    """The run config of a calibration: desk, web search off (readings repeat), the labelled set's corpus."""
    updated = config.model_copy(
        update={
            "protocol": exhibit_reader(),
            "retrieval": config.retrieval.model_copy(update={"web_search": False}),
            # the judge asked over the exhibits, as a debate's belief is: the calibration measures how well that tells the labels apart
            "belief": config.belief.model_copy(update={"desk_weighed": False}),
        }
    )
    return updated.model_copy(update={"corpus": corpus}) if corpus else updated


def plan(config: RunConfig, labelled: LabelledSet, services: Services, *, user: User | None = None) -> Plan:
    """Check the names, probe the endpoint once, and say what the readings will cost. ``user`` (signed in, read now): a
    checker may plan only on the desk's own endpoints."""
    config = calibration_config(config, corpus=labelled.corpus)
    check_reach(config, services, user)
    check_names(config)
    if not labelled.claims:
        raise CalibrationError(f"{labelled.name}: no claims to read")
    found = probe(config, services)
    return Plan(
        config,
        labelled,
        found,
        calibration_key(found.model, exhibit_settings(config).reader),
        cost_note(found, config, len(labelled.claims)),
    )


def check_reach(config: RunConfig, services: Services, user: User | None) -> None:
    """The probe is a call from this server to whatever address the form names: a checker may make it only to an endpoint
    the desk already uses (its editors chose those); another address is an editor's to try. None: a desk without sign-in."""
    if user is None or user.role in ALLOWED["calibrate"]:
        return
    judge = config.role("judge")
    own = {(e.backend, e.base_url.strip().rstrip("/")) for e in services.desk_settings().endpoints.values()}
    if (judge.backend, judge.base_url.strip().rstrip("/")) not in own:
        log.warning("refused a calibration probe of %s for %s (a %s)", judge.base_url or judge.backend, user.name, user.role)
        raise CalibrationError(
            "only an editor may point a calibration at an endpoint the desk does not use; as a checker you can plan on the "
            "desk's own endpoints (Settings lists them)"
        )


def calibrate(
    planned: Plan,
    services: Services,
    *,
    user: User | None,
    save: bool = True,
    on_progress: ProgressListener | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Outcome:
    """Read the planned claims, fit, and (``save``) keep the calibration as the one in use; editors only on a shared desk."""
    require_role(user, "calibrate")
    services.ensure_corpus(planned.config.corpus)
    readings, stopped, failed = read_claims(
        planned.labelled.claims, planned.config, services, on_progress=on_progress, should_stop=should_stop
    )
    if stopped or len(readings) < fitting.FOLDS * 2:
        return Outcome(planned, tuple(readings), None, None, stopped or f"only {len(readings)} claims could be read", failed)
    current = load_calibration(planned.probe.model, exhibit_settings(planned.config).reader, services.settings.data_dir)
    fitted = fit_readings(readings, planned.config, planned.labelled, logprobs=planned.probe.logprobs, current=current)
    measured = belief_separation(readings, services.store) if services.store is not None else None
    if fitted.calibration is not None and measured is not None:  # how far the belief chart's level can be read, for this model
        settings = {**fitted.calibration.settings, "belief": measured}
        fitted = replace(fitted, calibration=replace(fitted.calibration, settings=settings))
    saved = None
    if save and fitted.calibration is not None:
        saved = CalibrationShelf(services.settings.data_dir).save(planned.key, fitted.calibration, by=_who(user), why="fitted")
    return Outcome(planned, tuple(readings), fitted, saved, "", failed)


def roll_back(services: Services, model: str, reader: str, *, user: User | None, to: str = "") -> str:
    """Put an earlier calibration of ``model`` in use (editors only on a shared desk); returns what is in use now."""
    require_role(user, "calibrate")
    return CalibrationShelf(services.settings.data_dir).roll_back(calibration_key(model, reader), by=_who(user), to=to)


def _who(user: User | None) -> str:
    return user.name if user is not None else "local user"


# --- 6. the desk's own reviewed claims ---------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """The calibration in use against one refitted on the reviewed claims, both scored cross-validated on those claims."""

    claims: int
    current_name: str  # 'uncalibrated' when none was in use
    current: dict[str, float]  # the calibration in use, applied as it is (it was not fitted on these claims)
    refit: dict[str, float]  # refitted, 5-fold cross-validated
    refitted: Fitted

    @property
    def better(self) -> Literal["current", "refit"]:
        """The one with the lower log loss (the refit only where it can tell the labels apart at all)."""
        if self.refitted.calibration is None:
            return "current"
        return "refit" if self.refit["log_loss"] < self.current["log_loss"] else "current"


def compare_refit(
    readings: Sequence[Reading], config: RunConfig, labelled: LabelledSet, current: Calibration | None, *, logprobs: bool
) -> Comparison:
    """Score the calibration in use on the reviewed claims against one refitted on them (cross-validated)."""
    fitted = fit_readings(readings, config, labelled, logprobs=logprobs, current=current)
    _, y = design(readings)
    from pipelines.stages.stance_aggregation import supported

    p_current = np.array([supported(r.features, current) for r in readings])
    now = {**fitting.scores(np.clip(p_current, 1e-6, 1 - 1e-6), y), "auc": metrics.auc(p_current.tolist(), (y == 1).tolist())}
    return Comparison(len(readings), current.name if current else "uncalibrated", now, fitted.fit.cross_validated, fitted)


def refit_on_reviewed(
    planned: Plan,
    services: Services,
    *,
    user: User | None,
    choose: Literal["better", "refit", "current"] = "better",
    at_least: int = DEFAULT_REFIT_AT,
    on_progress: ProgressListener | None = None,
) -> tuple[Comparison, Version | None, str]:
    """Refit on the desk's reviewed claims and keep the better of it and the calibration in use (or the editor's ``choose``).

    Returns the comparison, the version saved (None when the current one is kept) and what is in use now.
    """
    require_role(user, "calibrate")
    if len(planned.labelled.claims) < at_least:
        raise CalibrationError(
            f"{len(planned.labelled.claims)} claims have an editor's SUPPORTS or REFUTES verdict; a refit needs at least {at_least}"
        )
    readings, stopped, _ = read_claims(planned.labelled.claims, planned.config, services, on_progress=on_progress)
    if stopped:
        raise CalibrationError(stopped)
    data_dir = services.settings.data_dir
    current = load_calibration(planned.probe.model, exhibit_settings(planned.config).reader, data_dir)
    comparison = compare_refit(readings, planned.config, planned.labelled, current, logprobs=planned.probe.logprobs)
    keep = comparison.better if choose == "better" else choose
    refit = comparison.refitted.calibration
    if keep == "refit" and refit is None:
        raise CalibrationError(comparison.refitted.refused)
    if keep == "refit" and refit is not None:
        why = "refitted on reviewed claims" + (
            " (the editor's choice)"
            if choose == "refit"
            else f": log loss {comparison.refit['log_loss']:.3f} against {comparison.current['log_loss']:.3f}"
        )
        version = CalibrationShelf(data_dir).save(planned.key, refit, by=_who(user), why=why)
        return comparison, version, version.stem
    in_use = CalibrationShelf(data_dir).in_use(planned.key)
    return comparison, None, in_use.stem if in_use else SHIPPED


def iter_versions(services: Services, model: str, reader: str) -> Iterator[tuple[Version, bool]]:
    """Every kept calibration of ``model`` and ``reader``, newest first, with whether it is the one in use."""
    shelf = CalibrationShelf(services.settings.data_dir)
    key = calibration_key(model, reader)
    in_use = shelf.in_use(key)
    for version in reversed(shelf.versions(key)):
        yield version, in_use is not None and version.stem == in_use.stem
