"""Renders a run's events, live as they stream or replayed from the store: the same code for both."""

from __future__ import annotations

import itertools
from typing import Any

import streamlit as st

from components.badges import avatar_for, label_badge, score_badge
from components.checker_events import is_checker_event, render_checker_event, render_verdicts
from components.evidence_table import render_evidence_table
from components.protocol_panels import ProtocolPanels
from components.safe_text import escape_markdown
from pipelines.events import (
    ArgumentDelta,
    Event,
    EvidenceRetrieved,
    ModelCallCompleted,
    QueryIssued,
    RoundStarted,
    RunFailed,
    RunStarted,
    ScoreComputed,
    StageCompleted,
    StageFailed,
    StageStarted,
    StatementChecked,
    TurnCompleted,
    VerdictOverridden,
    VerdictReached,
    WebResultsFiltered,
    WebSearchUnavailable,
)
from pipelines.llm.client import CallTally
from pipelines.models import Evidence, Verdict
from pipelines.stages.argument import citations, strip_label_line

METRIC_ORDER = {"F": 0, "AR": 1}


class RunView:
    """Feeds events into Streamlit elements laid out as: status, verdict, transcript, evidence."""

    def __init__(self, live: bool = True, key: str = "run") -> None:
        self.live = live
        self.key = key
        self.status: Any = st.status("Starting…", expanded=True) if live else None
        self.verdict_slot = st.empty()
        self.panels = ProtocolPanels(st.container(), key)
        self.transcript = st.container()
        with st.expander("Evidence", expanded=True):
            self.evidence_slot = st.empty()
        self.cost_slot = st.empty()
        self.stage_log: list[str] = []
        self.turn_text: dict[str, str] = {}
        self.turn_slots: dict[str, Any] = {}
        self.turn_boxes: dict[str, Any] = {}
        self.label_slots: dict[str, Any] = {}
        self.score_slots: dict[str, Any] = {}
        self.scores: dict[str, dict[str, ScoreComputed]] = {}
        self.queries: dict[tuple[str, int], QueryIssued] = {}
        self.also_searched: dict[tuple[str, int], list[str]] = {}  # later queries of that turn: the claim's rewrites, a checker's extras
        self.fallbacks: dict[tuple[str, int], str] = {}
        self.rounds: set[int] = set()
        self.round_boxes: dict[int, Any] = {}
        self.round_titles: dict[int, str] = {}  # sections that are not "Round N" (proclaim's role switch)
        self.current_round = 0
        self.evidence: dict[str, Evidence] = {}
        self.cited_by: dict[str, list[str]] = {}
        self.statements: dict[str, list[str]] | None = None  # evidence id -> statements resting on it, once any is checked
        self.tally = CallTally()
        self.failed = False
        self.verdict: Verdict | None = None
        self.struck: dict[str, str] = {}  # the checker's strikes (id -> reason), shown in the evidence table
        self.admitted: dict[str, str] = {}
        self.override: VerdictOverridden | None = None
        self.interrupted = False
        self._table_renders = itertools.count()  # each render of the evidence table needs a key of its own

    def feed(self, evt: Event) -> None:
        match evt:
            case RunStarted(protocol=protocol, claim=claim):
                self._log(f"🚀 {escape_markdown(protocol)} run started on: {escape_markdown(claim[:200])}")
            case StageStarted(stage=stage, detail=detail):
                self._log(f"⏳ **{escape_markdown(stage)}**: {escape_markdown(detail)}")
                if self.status is not None:
                    self.status.update(label=f"{stage}: {detail}"[:120])
            case StageCompleted(stage=stage, detail=detail):
                self._log(f"✅ {escape_markdown(stage)} done" + (f": {escape_markdown(detail[:200])}" if detail else ""))
            case StageFailed(stage=stage, reason=reason):
                self._log(f"⚠️ **{escape_markdown(stage)} failed**: {escape_markdown(reason)}")
                self._section(self.current_round).warning(f"⚠️ {escape_markdown(stage)} failed: {escape_markdown(reason)}")
            case WebSearchUnavailable(reason=reason, fallback=fallback, agent=agent, round=number):
                note = f"🌐 Web search unavailable ({reason})" + (f" — using {fallback} instead." if fallback else ".")
                self._log(escape_markdown(note))
                if agent:  # shown in that agent's message header
                    self.fallbacks[(agent, number)] = fallback or "no web results"
                else:
                    self.transcript.info(escape_markdown(note))
            case WebResultsFiltered(filtered=filtered, kept=kept, policy=policy, reasons=reasons, round=number):
                note = f"🛡️ Source policy ({policy}) kept {filtered} web result{'s' if filtered != 1 else ''} away from the agents; {kept} used."
                self._log(escape_markdown(note))
                self._section(number).caption(escape_markdown(note + " " + "; ".join(reasons[:5])))
            case RoundStarted(round=number):
                self._round(number, evt.heading)
            case QueryIssued():
                first = self.queries.setdefault((evt.agent, evt.round), evt)  # the agent's own query, not the checker's extras
                more = self.also_searched.setdefault((evt.agent, evt.round), [])
                if evt is not first and evt.query != first.query and evt.query not in more:
                    more.append(evt.query)
                mark = " (rewritten)" if evt.rewritten else ""
                self._log(f"🔍 {escape_markdown(evt.agent)} → {evt.tool}{mark}: {escape_markdown(evt.query)}")
            case EvidenceRetrieved(evidence=e):
                self.evidence[e.id] = e
            case ArgumentDelta(turn_id=turn_id, agent=agent, round=number, text=text):
                self._turn_box(turn_id, agent, number)
                self.turn_text[turn_id] = self.turn_text.get(turn_id, "") + text
                self.turn_slots[turn_id].markdown(escape_markdown(self.turn_text[turn_id]) + " ▌")
            case TurnCompleted(turn=turn):
                self._turn_box(turn.id, turn.agent, turn.round)
                self.turn_text[turn.id] = turn.text
                body = strip_label_line(turn.text) if turn.label else turn.text  # the label shows as a badge below
                self.turn_slots[turn.id].markdown(escape_markdown(body))
                if turn.label is not None:  # debaters in radar and the like argue without a label
                    self.label_slots[turn.id].markdown(f"Label: {label_badge(turn.label)}")
                for eid in turn.cited:
                    self.cited_by.setdefault(eid, []).append(turn.id)
                self._render_evidence()
            case StatementChecked(turn_id=turn_id, statement=statement, supported=supported, evidence_id=eid):
                box = self.turn_boxes.get(turn_id)
                if box is not None:
                    mark = f"✅ supported by {escape_markdown(eid)}" if supported and eid else "❌ unsupported"
                    box.caption(f"{mark}: {escape_markdown(statement)}")  # markup: mark is escaped above
                self.statements = self.statements if self.statements is not None else {}
                # An item is cited by the statement that rests on it and by any that names it as [E3].
                for cited in dict.fromkeys([*([eid] if supported and eid else []), *citations(statement)]):
                    mark = "" if supported and cited == eid else " (unsupported)"
                    self.statements.setdefault(cited, []).append(f"{turn_id}{mark}: {statement[:120]}")
            case ScoreComputed(target=target):
                self.scores.setdefault(target, {})[evt.metric] = evt
                self._render_scores(target)
                if evt.metric == "F" and self.statements is not None:
                    self._render_evidence()  # the statements column just changed
            case ModelCallCompleted():
                self.tally.add(evt)
            case VerdictReached(verdict=verdict):
                self.verdict = verdict
                render_verdicts(self)
            case RunFailed(reason=reason):
                self.failed = True
                self.verdict_slot.error(
                    f"❌ The run failed: {escape_markdown(reason)}. Everything produced before the failure is shown below and kept in History."
                )
            case _ if is_checker_event(evt):
                render_checker_event(self, evt)
            case _:
                pass
        self.panels.feed(evt, self)

    def finish(self) -> None:
        self._render_evidence()
        if self.tally.calls:
            self.cost_slot.caption(  # markup: numbers only
                f"💰 {self.tally.calls} model calls · {self.tally.tokens_in:,} tokens in · {self.tally.tokens_out:,} out · {self.tally.seconds:.1f} s of model time"
            )
        if self.status is not None:
            state = "error" if self.failed else "complete"
            label = "Run failed" if self.failed else "Run interrupted" if self.interrupted else "Run complete"
            self.status.update(label=label, state=state, expanded=False)
        else:
            with self.transcript.expander("Stages"):
                st.markdown("  \n".join(self.stage_log))  # markup: every line is escaped in _log's callers

    def _log(self, line: str) -> None:
        self.stage_log.append(line)
        if self.status is not None:
            self.status.markdown(line)  # markup: callers escape what they quote

    def _round(self, number: int, heading: str) -> None:
        """Each round is a section of the transcript: its heading, then its agents' messages."""
        self.current_round = max(self.current_round, number)
        if number not in self.rounds:
            self.rounds.add(number)
            if heading != f"Round {number}":
                self.round_titles[number] = heading
            self.round_boxes[number] = self.transcript.container()
            self.round_boxes[number].subheader(escape_markdown(heading))

    def _section(self, number: int) -> Any:
        if number in self.round_boxes:
            return self.round_boxes[number]
        if number == 0 and self.rounds:  # a turn after the rounds (a judge's ruling) gets its own section
            self.round_boxes[0] = self.transcript.container()
            self.round_boxes[0].subheader("Ruling")
            return self.round_boxes[0]
        return self.transcript

    def _turn_box(self, turn_id: str, agent: str, number: int) -> None:
        if turn_id in self.turn_slots:
            return
        with self._section(number).chat_message(agent, avatar=avatar_for(agent)):
            st.markdown(self._turn_header(agent, number))  # markup: _turn_header escapes what it quotes
            self.turn_slots[turn_id] = st.empty()
            self.label_slots[turn_id] = st.empty()
            self.score_slots[turn_id] = st.empty()
            self.turn_boxes[turn_id] = st.container()

    def _turn_header(self, agent: str, number: int) -> str:
        """Who speaks, in which round, with which tool and query (marked when rewritten or when the web fell back)."""
        when = escape_markdown(self.round_titles[number].lower()) if number in self.round_titles else f"round {number}"
        header = f"**{escape_markdown(agent)}**" + (f" · {when}" if number else "")
        query = self.queries.get((agent, number))
        if query is not None:
            tool = "🌐 web search" if query.tool == "web" else "📚 corpus search"
            fallback = self.fallbacks.get((agent, number))
            if fallback:
                tool += f" (web unavailable: {escape_markdown(fallback)} instead)"
            mark = " **(rewritten)**" if query.rewritten else ""
            header += f" · {tool} · query{mark}: “{escape_markdown(query.query)}”"
            more = self.also_searched.get((agent, number))
            if more:
                header += " · also searched: " + "; ".join(f"“{escape_markdown(q)}”" for q in more)
        return header

    def _render_scores(self, turn_id: str) -> None:
        """The answer's metrics as badges against their thresholds (F first), with how each was computed."""
        slot = self.score_slots.get(turn_id)
        if slot is None:
            return
        found = self.scores.get(turn_id, {})
        metrics = sorted(found.values(), key=lambda m: (METRIC_ORDER.get(m.metric, len(METRIC_ORDER)), m.metric))
        with slot.container():
            st.markdown(" ".join(score_badge(m.metric, m.value, m.threshold) for m in metrics))  # markup: badges
            details = [m for m in metrics if m.detail]
            if details:
                with st.expander("How these scores were computed"):
                    for m in details:
                        st.caption(f"{escape_markdown(m.metric)}: {escape_markdown(m.detail)}")

    def _render_evidence(self) -> None:
        with self.evidence_slot.container():
            render_evidence_table(
                list(self.evidence.values()),
                self.cited_by,
                key=f"{self.key}-evidence-{next(self._table_renders)}",
                statements=self.statements,
                struck=self.struck,
            )

    def _render_verdict(self, verdict: Verdict) -> None:
        with self.verdict_slot.container(border=True):
            conf = f" · confidence {verdict.confidence:.2f}" if verdict.confidence is not None else ""
            st.markdown(f"### Verdict {label_badge(verdict.label)}{conf}")  # markup: conf is a number
            st.markdown(f"**Decided by {escape_markdown(verdict.decided_by)}.** Why: {escape_markdown(verdict.stop_reason)}")
            if verdict.cited:
                cited = [self.evidence[c] for c in verdict.cited if c in self.evidence]
                st.markdown(
                    "**Rests on:** " + "; ".join(f"{escape_markdown(c.id)} ({escape_markdown(c.source_label)})" for c in cited)
                )  # markup: joined escaped parts


def replay(events: list[Event], key: str = "replay") -> RunView:
    """Render a stored run exactly as it looked live (without the streaming)."""
    view = RunView(live=False, key=key)
    completed = {e.turn.id for e in events if isinstance(e, TurnCompleted)}
    for evt in events:
        if isinstance(evt, ArgumentDelta) and evt.turn_id in completed:
            continue  # the completed turn carries the whole text
        view.feed(evt)
    view.finish()
    return view
