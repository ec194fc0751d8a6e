"""Renders a run's events, live as they stream or replayed from the store: the same code for both.

Each event first goes into the run's digest (``pipelines.record.digest``), which keeps the verdict,
the evidence, the checker's strikes and the cost; the view draws those from it, and lays out
what only a page shows (stage log, rounds, streamed turns, score badges).
"""

from __future__ import annotations

import itertools
import textwrap
import time
from collections.abc import Iterable
from typing import Any

import streamlit as st

from components.badges import avatar_for, label_badge, score_badge
from components.checker_events import is_checker_event, render_checker_event
from components.cost import render_cost
from components.evidence_table import render_evidence_table
from components.protocol_panels import ProtocolPanels
from components.verdict import render_verdict
from pipelines.core.domain import Turn, Verdict
from pipelines.core.events import (
    ArgumentDelta,
    CheckerAddedEvidence,
    CheckerAdmittedEvidence,
    CheckerStruckEvidence,
    Event,
    ModelCallCompleted,
    ModelServerRestarted,
    QueryIssued,
    RoundStarted,
    RunFailed,
    RunInterrupted,
    RunResumed,
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
from pipelines.core.text.safety import escape_markdown
from pipelines.record.digest import RunDigest
from pipelines.stages.argument import strip_label_line
from pipelines.stages.faithfulness import answer_paragraphs, place_statements

METRIC_ORDER = {"F": 0, "AR": 1}
COST_REDRAW_S = 0.25  # a live run redraws its cost at most this often (a fast backend makes dozens of calls a second)


LOG_CHARS = 300  # a stage log line quotes this much of a claim or a stage's detail; the record keeps it whole
STATUS_CHARS = 110  # the running stage's label above the log: one line


def log_cut(text: str, width: int = LOG_CHARS) -> str:
    """``text`` for a stage log line (or the running stage's label): at most ``width`` characters, cut at a word with "…"
    where it goes on (never silently)."""
    cut = textwrap.shorten(text, width=width, placeholder=" …")
    if cut.strip(" …"):
        return cut
    return " ".join(text.split())[: width - 1] + "…" if text.strip() else ""  # one word longer than the line (a URL)


class RunView:
    """Feeds events into Streamlit elements laid out as: verdict, status, cost, transcript, evidence."""

    def __init__(self, live: bool = True, key: str = "run") -> None:
        self.live = live
        self.key = key
        # The verdict first: empty (and taking no room) while the run goes, it is the first thing on screen once it rules,
        # above the run's status and its cost (a checker reads the verdict, its confidence and what it rests on first).
        self.verdict_slot = st.empty()
        self.status: Any = st.status("Starting…", expanded=True) if live else None
        self.digest = RunDigest()
        self.cost_line = st.empty()
        with st.expander("Cost by stage", expanded=False):
            self.cost_table = st.empty()
        panels_area = st.container()
        self.transcript = st.container()
        with st.expander("Evidence", expanded=True):
            self.evidence_slot = st.empty()
        self._cost_drawn = 0.0
        self._evidence_drawn = -1  # how many items the evidence table showed when last drawn
        self.stage_log: list[str] = []
        self.turn_text: dict[str, str] = {}
        self.turn_slots: dict[str, Any] = {}
        self.turn_body: dict[str, str] = {}  # a completed turn's text as shown (its label line apart)
        self.mark_slots: dict[str, Any] = {}
        self.turn_boxes: dict[str, Any] = {}
        self.panels = ProtocolPanels(panels_area, key, self.transcript, self.turn_boxes)
        self.label_slots: dict[str, Any] = {}
        self.echo_slots: dict[str, Any] = {}
        self.score_slots: dict[str, Any] = {}
        self.scores: dict[str, dict[str, ScoreComputed]] = {}
        self.queries: dict[tuple[str, int], QueryIssued] = {}
        self.also_searched: dict[tuple[str, int], list[str]] = {}  # later queries of that turn: the claim's rewrites, a checker's extras
        self.fallbacks: dict[tuple[str, int], str] = {}
        self.rounds: set[int] = set()
        self.round_boxes: dict[int, Any] = {}
        self.round_titles: dict[int, str] = {}  # sections that are not "Round N" (proclaim's role switch)
        self.current_round = 0
        self._table_renders = itertools.count()  # each render of the evidence table needs a key of its own

    @property
    def verdict(self) -> Verdict | None:
        """The model's verdict, once reached."""
        return self.digest.verdict

    def feed_all(self, events: Iterable[Event]) -> None:
        """Feed ``events`` in order, each protocol panel drawn once at the end rather than at each event that changes it."""
        with self.panels.batch():
            for evt in events:
                self.feed(evt)

    def feed(self, evt: Event) -> None:
        self.digest.feed(evt)
        match evt:
            case RunStarted(protocol=protocol, claim=claim):
                self.log(f"🚀 {escape_markdown(protocol)} run started on: {escape_markdown(log_cut(claim))}")
            case StageStarted(stage=stage, detail=detail):
                self.log(f"⏳ **{escape_markdown(stage)}**: {escape_markdown(detail)}")
                if self.status is not None:
                    self.status.update(label=escape_markdown(log_cut(f"{stage}: {detail}", STATUS_CHARS)))
            case StageCompleted(stage=stage, detail=detail):
                self.log(f"✅ {escape_markdown(stage)} done" + (f": {escape_markdown(log_cut(detail))}" if detail else ""))
                self.refresh_evidence()  # a search just ended: what it found shows now, not when the first turn ends
            case ModelServerRestarted():
                self._server_restarted(evt)
            case StageFailed(stage=stage, reason=reason):
                self.log(f"⚠️ **{escape_markdown(stage)} failed**: {escape_markdown(reason)}")
                self._section(self.current_round).warning(f"⚠️ {escape_markdown(stage)} failed: {escape_markdown(reason)}")
            case WebSearchUnavailable(fallback=fallback, agent=agent, round=number):
                note = f"🌐 Web search unavailable ({evt.why})" + (f" — using {fallback} instead." if fallback else ".")
                self.log(escape_markdown(note))
                if agent:  # shown in that agent's message header
                    self.fallbacks[(agent, number)] = fallback or "no web results"
                else:
                    self.transcript.info(escape_markdown(note))
            case WebResultsFiltered(filtered=filtered, kept=kept, policy=policy, reasons=reasons, round=number):
                note = f"🛡️ Source policy ({policy}) kept {filtered} web result{'s' if filtered != 1 else ''} away from the agents; {kept} used."
                self.log(escape_markdown(note))
                self._section(number).caption(escape_markdown(note + " " + "; ".join(reasons[:5])))
            case RoundStarted(round=number):
                self._round(number, evt.heading)
            case QueryIssued():
                self._query(evt)
            case ArgumentDelta():
                self._streamed(evt)
            case TurnCompleted(turn=turn):
                self._turn_done(turn)
            case StatementChecked(turn_id=turn_id, statement=statement, supported=supported, evidence_id=eid):
                self._render_marked(turn_id)
                box = self.turn_boxes.get(turn_id)
                if box is not None:  # the list, as detail under the marked text
                    mark = f"✅ supported by {escape_markdown(eid)}" if supported and eid else "❌ unsupported"
                    box.caption(f"{mark}: {escape_markdown(statement)}")  # markup: mark is escaped above
            case ScoreComputed(target=target):
                self.scores.setdefault(target, {})[evt.metric] = evt
                self._render_scores(target)
                if evt.metric == "F" and self.digest.statements is not None:
                    self.render_evidence()  # the statements column just changed
            case VerdictReached() | VerdictOverridden() | RunFailed() | RunInterrupted() | RunResumed():
                render_verdict(self.verdict_slot, self.digest)
                if self.live:
                    self.render_cost()  # the card and the cost it took appear together, whatever the redraw throttle held back
                render_checker_event(evt, self.transcript, self.log, from_file=self.digest.last_from_file)
            case CheckerStruckEvidence() | CheckerAdmittedEvidence() | CheckerAddedEvidence():
                render_checker_event(evt, self.transcript, self.log, from_file=self.digest.last_from_file)
                self.render_evidence()
            case _ if is_checker_event(evt):
                render_checker_event(evt, self.transcript, self.log, from_file=self.digest.last_from_file)
            case ModelCallCompleted() if self.live and time.monotonic() - self._cost_drawn > COST_REDRAW_S:
                self.render_cost()
            case _:
                pass
        self.panels.feed(evt, self.digest)

    def _server_restarted(self, evt: ModelServerRestarted) -> None:
        """The restart said in the stage log and in the round it broke into."""
        note = (
            f"The model server stopped mid-run ({evt.reason[:160]}) and was started again in {evt.seconds:.0f} s; "
            f"the {evt.role}'s call it broke was asked again. Nothing answered before was lost or asked again."
        )
        self.log(f"🔁 {escape_markdown(note)}")
        self._section(self.current_round).warning(f"🔁 {escape_markdown(note)}")

    def _query(self, evt: QueryIssued) -> None:
        """A search: the turn's own query kept for its header, later ones of that turn listed beside it, each logged."""
        first = self.queries.setdefault((evt.agent, evt.round), evt)  # the agent's own query, not the checker's extras
        more = self.also_searched.setdefault((evt.agent, evt.round), [])
        if evt is not first and evt.query != first.query and evt.query not in more:
            more.append(evt.query)
        mark = " (rewritten)" if evt.rewritten else ""
        self.log(f"🔍 {escape_markdown(evt.agent)} → {evt.tool}{mark}: {escape_markdown(evt.query)}")

    def _streamed(self, evt: ArgumentDelta) -> None:
        """A piece of a turn as it streams, drawn after what came before with a cursor."""
        if evt.turn_id not in self.turn_slots:
            self.refresh_evidence()  # a turn starts streaming: show what it argues from now, not when it ends
        self._turn_box(evt.turn_id, evt.agent, evt.round)
        self.turn_text[evt.turn_id] = self.turn_text.get(evt.turn_id, "") + evt.text
        self.turn_slots[evt.turn_id].markdown(escape_markdown(self.turn_text[evt.turn_id]) + " ▌")

    def _turn_done(self, turn: Turn) -> None:
        """A finished turn: its text without the label line, its checked statements marked, its label badge and any echo."""
        self._turn_box(turn.id, turn.agent, turn.round)
        self.turn_text[turn.id] = turn.text
        body = strip_label_line(turn.text) if turn.label else turn.text  # the label shows as a badge below
        self.turn_body[turn.id] = body
        self.turn_slots[turn.id].markdown(escape_markdown(body))
        self._render_marked(turn.id)  # statements checked before the turn's end (a replay reorders nothing, but be safe)
        if turn.label is not None:  # debaters in radar and the like argue without a label
            self.label_slots[turn.id].markdown(f"Label: {label_badge(turn.label)}")
        self._mark_echo(turn)
        self.render_evidence()

    def finish(self) -> None:
        self.render_evidence()
        self.render_cost(running=False)
        if self.status is not None:
            failed = self.digest.failure is not None
            state = "error" if failed else "complete"
            label = "Run failed" if failed else "Run interrupted" if self.digest.interruption is not None else "Run complete"
            self.status.update(label=label, state=state, expanded=False)
        else:
            with self.transcript.expander("Stages"):
                st.markdown("  \n".join(self.stage_log))  # markup: every line is escaped in log's callers

    def render_cost(self, *, running: bool | None = None) -> None:
        """The cost line and the per-stage table as the digest has them now; a running run counts its wall time up to now."""
        running = self.live if running is None else running
        cost = self.digest.cost
        started = self.digest.started_at
        if running and started is not None:
            cost = cost.model_copy(update={"wall_seconds": max(0.0, time.time() - started)})
        render_cost(self.cost_line, self.cost_table, cost, self.digest.by_stage, running=running)
        self._cost_drawn = time.monotonic()

    def log(self, line: str) -> None:
        """One line of the stage log (Markdown: callers escape what they quote)."""
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
            self.round_boxes[number].subheader(escape_markdown(heading), anchor=f"round-{number}")

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
            self.mark_slots[turn_id] = st.empty()
            self.label_slots[turn_id] = st.empty()
            self.echo_slots[turn_id] = st.empty()  # under the label: a copied turn says so before its scores
            self.score_slots[turn_id] = st.empty()
            self.turn_boxes[turn_id] = st.container()

    def _mark_echo(self, turn: Turn) -> None:
        """Say so under a turn that repeats another debater's last-round turn nearly word for word (weak models echo)."""
        echoed = self.digest.echoes.get(turn.id)
        if echoed is not None:
            self.echo_slots[turn.id].markdown(
                f":orange-badge[🔁 {escape_markdown(echoed.agent)}'s round {echoed.round} again] nearly word for word: "
                "the model repeated its opponent here instead of arguing from its own evidence."
            )  # markup: the agent's name is escaped

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

    def _render_marked(self, turn_id: str) -> None:
        """The turn's text with each checked statement marked where it stands: ✓ and the exhibit it rests on, or ✗ unsupported."""
        body, checked = self.turn_body.get(turn_id), self.digest.checked.get(turn_id)
        if body is None or not checked or turn_id not in self.turn_slots:
            return
        paragraphs = answer_paragraphs(body)
        places = place_statements([s for p in paragraphs for s in p], [c.statement for c in checked])
        marks: dict[int, list[str]] = {}
        for c, where in zip(checked, places, strict=True):
            if where is not None:
                marks.setdefault(where, []).append(statement_mark(c.supported, c.evidence_id))
        shown, number = [], 0
        for paragraph in paragraphs:
            sentences = []
            for sentence in paragraph:
                sentences.append(escape_markdown(sentence) + "".join(f" {m}" for m in marks.get(number, [])))
                number += 1
            shown.append(" ".join(sentences))
        self.turn_slots[turn_id].markdown("\n\n".join(shown))  # markup: escaped sentences and statement_mark badges
        supported = sum(c.supported for c in checked)
        apart = sum(where is None for where in places)
        note = f"Faithfulness, marked in the text: {supported} of {len(checked)} statements rest on an exhibit (✓ and its id), the rest are unsupported (✗)."
        if apart:
            note += f" {apart} could not be placed in the text; the list below has every statement."
        self.mark_slots[turn_id].caption(note)  # markup: numbers and our own words

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

    def refresh_evidence(self) -> None:
        """Draw the evidence table again if items came in since it was last drawn (a live page, between turns)."""
        if self.live and len(self.digest.evidence) != self._evidence_drawn:
            self.render_evidence()

    def render_evidence(self) -> None:
        """The evidence table as the digest has it now: every item, who cites it, the checker's strikes."""
        run = self.digest
        self._evidence_drawn = len(run.evidence)
        with self.evidence_slot.container():
            render_evidence_table(
                list(run.evidence.values()),
                run.cited_by,
                key=f"{self.key}-evidence-{next(self._table_renders)}",
                statements=run.statements,
                struck=run.struck,
            )


def statement_mark(supported: bool, evidence_id: str | None) -> str:
    """A checked statement's mark in the answer's text: a green ✓ with the exhibit it rests on, or a red ✗."""
    if supported and evidence_id:
        return f":green-badge[✓ {escape_markdown(evidence_id)}]"
    return ":red-badge[✗ unsupported]"


def replay(events: list[Event], key: str = "replay") -> RunView:
    """Render a stored run exactly as it looked live (without the streaming)."""
    view = RunView(live=False, key=key)
    completed = {e.turn.id for e in events if isinstance(e, TurnCompleted)}
    # the completed turn carries the whole text: its chunks are not drawn again
    view.feed_all(e for e in events if not (isinstance(e, ArgumentDelta) and e.turn_id in completed))
    view.finish()
    return view
