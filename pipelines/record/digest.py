"""A run's events read once: the verdict, the evidence by id, what the checker did, and one ``Cost``.

``digest(events)`` reads a stored run; a live one feeds ``RunDigest.feed`` event by event and
reads the same fields as they grow. Compare, batch, export, evaluation, the UI and the
benches all take a run's verdict, evidence and cost from here, so each is computed one way.
Pure: no I/O, no Streamlit, nothing but the events it is fed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from pipelines.core import events as ev
from pipelines.core.domain import Evidence, Turn, Verdict, citations
from pipelines.core.text.echo import echoes
from pipelines.record.labels import common_label


class Cost(BaseModel):
    """What a run (or a stage, or many runs) cost: model calls, tokens, model time and wall time.

    A call answered from the response cache or a resumed run's journal counts in ``calls`` and
    in ``cached_calls``; it costs no tokens and no model time. ``tokens_reused`` is the part of
    ``tokens_in`` the server kept from an earlier call's prompt (llama.cpp's prompt cache): sent,
    but not read again by the model.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = 0
    cached_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reused: int = 0
    model_seconds: float = 0.0
    wall_seconds: float = 0.0
    spent: float = 0.0  # money, at the run's prices (its calls' recorded costs)
    priced: bool = False  # the run had prices: ``spent`` is shown wherever tokens are

    @property
    def prompt_computed(self) -> int:
        """The prompt tokens the model computed: those sent less those its server reused from its prompt cache."""
        return self.tokens_in - self.tokens_reused

    @property
    def tokens_read(self) -> int:
        """The tokens the model computed: the prompt tokens it computed, and those it wrote."""
        return self.prompt_computed + self.tokens_out

    def add_call(self, call: ev.ModelCallCompleted) -> Cost:
        return self.model_copy(
            update={
                "calls": self.calls + 1,
                "cached_calls": self.cached_calls + int(call.cached),
                "tokens_in": self.tokens_in + call.tokens_in,
                "tokens_out": self.tokens_out + call.tokens_out,
                "tokens_reused": self.tokens_reused + call.tokens_reused,
                "model_seconds": self.model_seconds + call.seconds,
                "spent": self.spent + (call.cost or 0.0),
                "priced": self.priced or call.cost is not None,
            }
        )

    def __add__(self, other: Cost) -> Cost:
        summed = {name: getattr(self, name) + getattr(other, name) for name in Cost.model_fields if name != "priced"}
        return Cost(**summed, priced=self.priced or other.priced)

    def rounded(self, places: int = 3) -> Cost:
        return self.model_copy(
            update={"model_seconds": round(self.model_seconds, places), "wall_seconds": round(self.wall_seconds, places)}
        )

    def describe(self) -> str:
        """One line for a page or a report: numbers only, safe in any Markdown sink; calls answered from the cache are said so."""
        line = (
            f"{self.calls} model calls · {self.tokens_in:,} tokens in{self.reused_note()} · {self.tokens_out:,} out · "
            f"{self.model_seconds:.1f} s of model time"
        )
        return line + self.spent_note() + (f" ({self.cached_note()})" if self.cached_calls else "")

    def spent_note(self) -> str:
        """ " · 0.0123 spent" when the run had prices, else "" (then money is not known, not zero)."""
        return f" · {self.spent:.4g} spent" if self.priced else ""

    def reused_note(self) -> str:
        """What follows "N tokens in": " (5,900 reused from the server's prompt cache)", or "" when the server reused none or did not say."""
        return f" ({self.tokens_reused:,} reused from the server's prompt cache)" if self.tokens_reused else ""

    def cached_note(self) -> str:
        """Why a run can cost no tokens: "all 12 calls answered from the cache", "3 of 12 calls answered from the cache"."""
        if not self.cached_calls:
            return ""
        if self.cached_calls == self.calls:
            return f"all {self.calls} calls answered from the cache or a resumed run's record: no tokens, no model time"
        return f"{self.cached_calls} of {self.calls} calls answered from the cache or a resumed run's record"

    @classmethod
    def total(cls, costs: Iterable[Cost]) -> Cost:
        return sum(costs, cls())


def stage_name(stage: str) -> str:
    """Stages of every round count together: "round 3: arguments" -> "rounds: arguments", "RAG round 2 query" -> "RAG query"."""
    return re.sub(r" round \d+ ", " ", re.sub(r"^round \d+: ", "rounds: ", stage))


def call_stage(open_stages: list[str], role: str) -> str:
    """The innermost open stages (a stage that another open one extends is its parent, not a sibling)."""
    innermost = sorted({s for s in open_stages if not any(o != s and o.startswith(s) for o in open_stages)})
    return " + ".join(innermost) if innermost else f"(no stage: {role} calls)"


class RunDigest:
    """Everything a summary, a record or a page reads off a run's events, kept current as they are fed.

    Evidence is keyed by id (the first item under an id stands); ``struck`` holds the checker's
    strikes still in force (an admission lifts one), ``admitted`` the admissions; a run that
    resumed is no longer failed or interrupted. Stages nest and run side by side: a model call
    counts towards the innermost open stages (``by_stage``, rounds folded together).
    """

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.claim = ""
        self.protocol = ""
        self.config: dict[str, Any] = {}
        self.verdict: Verdict | None = None
        self.override: ev.VerdictOverridden | None = None
        self.failure: str | None = None
        self.interruption: str | None = None
        self.stopped_by: ev.BudgetStop | None = None  # the spend limit that stopped the run (its interruption says so in words)
        self.source_run = ""  # a re-run on frozen evidence: the run whose evidence it used
        self.started_by = ""
        self.evidence: dict[str, Evidence] = {}
        self.cited_by: dict[str, list[str]] = {}  # evidence id -> the turns that cite it
        self.turns: list[Turn] = []  # the debate's turns, in order
        self.echoes: dict[str, Turn] = {}  # turn id -> the other debater's previous-round turn it repeats nearly word for word
        self.statements: dict[str, list[str]] | None = None  # evidence id -> statements resting on it, once any is checked
        self.checked: dict[str, list[ev.StatementChecked]] = {}  # turn id -> its statements as faithfulness checked them
        self.quotes: dict[str, tuple[str, ...]] = {}  # evidence id -> the sentences a protocol quoted from it (desk's exhibits)
        self.points_to: dict[str, str] = {}  # evidence id -> supported / refuted / unrelated, when the verdict was aggregated from stances
        self.calibration = ""  # the calibration the aggregated verdict's probability comes from ('uncalibrated' when none)
        self.aggregated: ev.VerdictAggregated | None = None  # the last weighing of exhibit stances: what was read, the bound, the ground
        self.struck: dict[str, str] = {}
        self.admitted: dict[str, str] = {}
        self.interventions: list[ev.Event] = []
        # An imported run: this desk's import, and what the file says its checkers did (never this desk's verdict or audit trail).
        self.imported: ev.RecordImported | None = None
        self.imported_interventions: list[ev.Event] = []
        self.imported_overrides: list[ev.VerdictOverridden] = []
        self._file_left = 0  # how many of the events still to come are the imported file's
        self.last_from_file = False  # the event fed last is the imported file's word (a page marks it so)
        self.calls: list[ev.ModelCallCompleted] = []
        self.queries = 0
        self.web_queries = 0  # queries meant for the web search
        self.web_unavailable = 0  # of them, those the web could not answer (off, or down)
        self.events = 0
        self.by_stage: dict[str, Cost] = {}
        self._model_cost = Cost()
        self._open_stages: list[str] = []
        self._first_at: float | None = None
        self._last_at: float | None = None

    @property
    def cost(self) -> Cost:
        """Calls, tokens and model time so far; wall time from the first event to the last."""
        wall = (self._last_at - self._first_at) if self._first_at is not None and self._last_at is not None else 0.0
        return self._model_cost.model_copy(update={"wall_seconds": wall})

    @property
    def web_outage(self) -> tuple[int, int] | None:
        """(web queries the web could not answer, web queries) where it failed for any; None where it never did."""
        return (self.web_unavailable, max(self.web_queries, self.web_unavailable)) if self.web_unavailable else None

    @property
    def started_at(self) -> float | None:
        """When the first event happened (epoch seconds): a live page counts the elapsed time from it."""
        return self._first_at

    @property
    def final_label(self) -> str | None:
        """The checker's verdict when they set one, else the model's."""
        if self.override is not None:
            return self.override.label
        return self.verdict.label if self.verdict is not None else None

    @property
    def outcome(self) -> str:
        """How the run ended, in a few words: its label, "failed: why", or "no verdict"."""
        if self.verdict is not None:
            return self.verdict.label
        return f"failed: {self.failure}" if self.failure is not None else "no verdict"

    def cited_evidence(self) -> list[Evidence]:
        """The items the model's verdict rests on, in the order it cites them."""
        cited = self.verdict.cited if self.verdict is not None else ()
        return [self.evidence[c] for c in cited if c in self.evidence]

    def feed(self, evt: ev.Event) -> None:
        self.events += 1
        from_file = self.last_from_file = self._file_left > 0
        self._file_left -= 1 if from_file else 0
        if isinstance(evt, ev.RecordImported):  # not the run's time; the outermost import says how far the file's word goes
            if not from_file:
                self.imported, self._file_left = evt, evt.events
            return
        if self._first_at is None:
            self._first_at = evt.at
        if not isinstance(evt, ev.VerdictOverridden):  # a verdict set after the run is not the run's time
            self._last_at = evt.at
        if isinstance(evt, ev.INTERVENTIONS):
            if from_file:  # what the file says a checker did: kept apart, never this desk's verdict
                self.imported_interventions.append(evt)
                if isinstance(evt, ev.VerdictOverridden):
                    self.imported_overrides.append(evt)
                    return
            else:
                self.interventions.append(evt)
        match evt:
            case ev.RunStarted():
                self.run_id, self.claim, self.protocol, self.config = evt.run_id, evt.claim, evt.protocol, evt.config
                self.source_run, self.started_by = evt.source_run, evt.by
            case ev.EvidenceRetrieved(evidence=item) | ev.CheckerAddedEvidence(evidence=item):
                self.evidence.setdefault(item.id, item)
            case ev.QueryIssued(tool=tool):
                self.queries += 1
                self.web_queries += tool == "web"
            case ev.WebSearchUnavailable():
                self.web_unavailable += 1
            case ev.TurnCompleted(turn=turn):
                for eid in turn.cited:
                    self.cited_by.setdefault(eid, []).append(turn.id)
                repeated = next(
                    (t for t in self.turns if t.agent != turn.agent and t.round == turn.round - 1 and echoes(turn.text, t.text)), None
                )
                if repeated is not None:
                    self.echoes[turn.id] = repeated
                self.turns.append(turn)
            case ev.StatementChecked():
                self.checked.setdefault(evt.turn_id, []).append(evt)
                self._statement(evt)
            case ev.ExhibitStanceRead(evidence_id=eid, quoted=quoted) if quoted:
                self.quotes.setdefault(eid, quoted)
            case ev.VerdictAggregated(points_to=points_to, calibration=calibration):
                self.points_to = dict(points_to)
                self.calibration = calibration
                weighed = evt
                if self.aggregated is not None and weighed.nearest is None:  # what the search found is the run's, not one weighing's
                    weighed = weighed.model_copy(update={"nearest": self.aggregated.nearest, "set_aside": self.aggregated.set_aside})
                self.aggregated = weighed
            case ev.CheckerStruckEvidence(evidence_id=eid, reason=reason):
                self.struck[eid] = reason
            case ev.CheckerAdmittedEvidence(evidence_id=eid, reason=reason):
                self.struck.pop(eid, None)
                self.admitted[eid] = reason
            case ev.ModelCallCompleted():
                self.calls.append(evt)
                self._model_cost = self._model_cost.add_call(evt)
                stage = call_stage(self._open_stages, evt.role)
                self.by_stage[stage] = self.by_stage.get(stage, Cost()).add_call(evt)
            case ev.StageStarted(stage=stage):
                self._open_stages.append(stage_name(stage))
            case ev.StageCompleted(stage=stage) if stage_name(stage) in self._open_stages:
                opened = self._open_stages
                del opened[len(opened) - 1 - opened[::-1].index(stage_name(stage))]
            case ev.VerdictReached(verdict=verdict):
                self.verdict = verdict
            case ev.VerdictOverridden():
                self.override = evt
            case ev.RunFailed(reason=reason):
                self.failure = reason
            case ev.RunInterrupted(reason=reason):
                self.interruption, self.stopped_by = reason, evt.budget
            case ev.RunResumed():
                self.failure = self.interruption = self.stopped_by = None
            case _:
                pass

    def _statement(self, evt: ev.StatementChecked) -> None:
        # An item is cited by the statement that rests on it and by any that names it as [E3].
        self.statements = self.statements if self.statements is not None else {}
        resting = evt.evidence_id if evt.supported and evt.evidence_id else None
        for cited in dict.fromkeys([*([resting] if resting else []), *citations(evt.statement)]):
            mark = "" if cited == resting else " (unsupported)"
            self.statements.setdefault(cited, []).append(f"{evt.turn_id}{mark}: {evt.statement[:120]}")


def describe_intervention(evt: ev.Event, quote: Callable[[str, int], str]) -> str:
    """What the checker did, in words, for a report or a page; each quoted string goes through ``quote(text, limit)``, which escapes it for its sink."""
    match evt:
        case ev.CheckerEditedPlan(kind=kind, before=before, after=after):
            was = "; ".join(quote(item, 200) for item in before)
            now = "; ".join(quote(item, 200) for item in after)
            return f"before the first search: rewrote the {quote(kind, 40)} “{was}” → “{now}”"
        case ev.CheckerEditedQuery(round=r, agent=agent, before=before, after=after):
            return f"round {r}: edited {quote(agent, 80)}'s next query “{quote(before, 200)}” → “{quote(after, 200)}”"
        case ev.CheckerAddedQuery(round=r, query=query):
            return f"round {r}: added a query “{quote(query, 200)}”"
        case ev.CheckerStruckEvidence(round=r, evidence_id=eid, reason=reason):
            return f"round {r}: struck {quote(eid, 40)} ({quote(reason, 300)})"
        case ev.CheckerAdmittedEvidence(round=r, evidence_id=eid, reason=reason):
            return f"round {r}: admitted {quote(eid, 40)} ({quote(reason, 300)})"
        case ev.CheckerAddedEvidence(round=r, evidence=item):
            where = f" from {quote(item.url, 200)}" if item.url else ""
            return f"round {r}: added evidence {quote(item.id, 40)}{where}: “{quote(item.text, 200)}”"
        case ev.StepResumed(round=r, action=action, note=note):
            done = "stopped the debate: the verdict comes next" if action == "stop" else "let the run continue"
            return f"round {r}: {done}" + (f" ({quote(note, 300)})" if note else "")
        case ev.VerdictOverridden(label=label, note=note, model_verdict=was):
            said = f" (the model said {quote(_in_words(was.label), 80)})" if was else ""
            return f"set the verdict to **{quote(_in_words(label), 80)}**{said}" + (f": {quote(note, 500)}" if note else "")
        case _:
            return ""


def _in_words(label: str) -> str:
    """A label in the one vocabulary, the protocol's own word beside it when it differs: "SUPPORTED (its word: SUPPORTS)"."""
    common = common_label(label)
    return common if common == label else f"{common} (its word: {label})"


def digest(events: Iterable[ev.Event]) -> RunDigest:
    """A stored run's events read in one pass."""
    found = RunDigest()
    for evt in events:
        found.feed(evt)
    return found


__all__ = ["Cost", "RunDigest", "call_stage", "describe_intervention", "digest", "stage_name"]
