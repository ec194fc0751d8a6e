"""Renders a run's events, live as they stream or replayed from the store: the same code for both."""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.badges import avatar_for, label_badge, score_badge
from components.evidence_table import render_evidence_table
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
    VerdictReached,
    WebResultsFiltered,
    WebSearchUnavailable,
)
from pipelines.llm.client import CallTally
from pipelines.models import Evidence, Verdict


class RunView:
    """Feeds events into Streamlit elements laid out as: status, verdict, transcript, evidence."""

    def __init__(self, live: bool = True, key: str = "run") -> None:
        self.live = live
        self.key = key
        self.status: Any = st.status("Starting…", expanded=True) if live else None
        self.verdict_slot = st.empty()
        self.transcript = st.container()
        with st.expander("Evidence", expanded=True):
            self.evidence_slot = st.empty()
        self.cost_slot = st.empty()
        self.stage_log: list[str] = []
        self.turn_text: dict[str, str] = {}
        self.turn_slots: dict[str, Any] = {}
        self.turn_boxes: dict[str, Any] = {}
        self.queries: dict[str, QueryIssued] = {}
        self.rounds: set[int] = set()
        self.evidence: dict[str, Evidence] = {}
        self.cited_by: dict[str, list[str]] = {}
        self.tally = CallTally()
        self.failed = False
        self.verdict: Verdict | None = None

    def feed(self, evt: Event) -> None:
        match evt:
            case RunStarted(protocol=protocol, claim=claim):
                self._log(f"🚀 {protocol} run started on: {escape_markdown(claim[:200])}")
            case StageStarted(stage=stage, detail=detail):
                self._log(f"⏳ **{stage}**: {escape_markdown(detail)}")
                if self.status is not None:
                    self.status.update(label=f"{stage}: {detail}"[:120])
            case StageCompleted(stage=stage, detail=detail):
                self._log(f"✅ {stage} done" + (f": {escape_markdown(detail[:200])}" if detail else ""))
            case StageFailed(stage=stage, reason=reason):
                self._log(f"⚠️ **{stage} failed**: {escape_markdown(reason)}")
                self.transcript.warning(f"⚠️ {stage} failed: {reason}")
            case WebSearchUnavailable(reason=reason, fallback=fallback):
                note = f"🌐 Web search unavailable ({reason})" + (f" — using {fallback} instead." if fallback else ".")
                self._log(escape_markdown(note))
                self.transcript.info(note)
            case WebResultsFiltered(filtered=filtered, kept=kept, policy=policy, reasons=reasons):
                note = f"🛡️ Source policy ({policy}) kept {filtered} web result{'s' if filtered != 1 else ''} away from the agents; {kept} used."
                self._log(escape_markdown(note))
                self.transcript.caption(escape_markdown(note + " " + "; ".join(reasons[:5])))
            case RoundStarted(round=number):
                self._round(number)
            case QueryIssued():
                self.queries[evt.agent] = evt
                self._log(f"🔍 {escape_markdown(evt.agent)} → {evt.tool}: {escape_markdown(evt.query)}")
            case EvidenceRetrieved(evidence=e):
                self.evidence[e.id] = e
            case ArgumentDelta(turn_id=turn_id, agent=agent, round=number, text=text):
                self._turn_box(turn_id, agent, number)
                self.turn_text[turn_id] = self.turn_text.get(turn_id, "") + text
                self.turn_slots[turn_id].markdown(escape_markdown(self.turn_text[turn_id]) + " ▌")
            case TurnCompleted(turn=turn):
                self._turn_box(turn.id, turn.agent, turn.round)
                self.turn_text[turn.id] = turn.text
                body = escape_markdown(turn.text)
                self.turn_slots[turn.id].markdown(body)
                self.turn_boxes[turn.id].markdown(label_badge(turn.label))
                for eid in turn.cited:
                    self.cited_by.setdefault(eid, []).append(turn.id)
                self._render_evidence()
            case StatementChecked(turn_id=turn_id, statement=statement, supported=supported, evidence_id=eid):
                box = self.turn_boxes.get(turn_id)
                if box is not None:
                    mark = f"✅ supported by {eid}" if supported and eid else "❌ unsupported"
                    box.caption(f"{mark}: {escape_markdown(statement)}")
            case ScoreComputed(target=target, metric=metric, value=value, threshold=threshold):
                box = self.turn_boxes.get(target)
                if box is not None:
                    box.markdown(score_badge(metric, value, threshold))
            case ModelCallCompleted():
                self.tally.add(evt)
            case VerdictReached(verdict=verdict):
                self.verdict = verdict
                self._render_verdict(verdict)
            case RunFailed(reason=reason):
                self.failed = True
                self.verdict_slot.error(
                    f"❌ The run failed: {reason}. Everything produced before the failure is shown below and kept in History."
                )
            case _:
                pass

    def finish(self) -> None:
        self._render_evidence()
        if self.tally.calls:
            self.cost_slot.caption(
                f"💰 {self.tally.calls} model calls · {self.tally.tokens_in:,} tokens in · {self.tally.tokens_out:,} out · {self.tally.seconds:.1f} s of model time"
            )
        if self.status is not None:
            state = "error" if self.failed else "complete"
            self.status.update(label="Run failed" if self.failed else "Run complete", state=state, expanded=False)
        else:
            with self.transcript.expander("Stages"):
                st.markdown("  \n".join(self.stage_log))

    def _log(self, line: str) -> None:
        self.stage_log.append(line)
        if self.status is not None:
            self.status.markdown(line)

    def _round(self, number: int) -> None:
        if number not in self.rounds:
            self.rounds.add(number)
            self.transcript.subheader(f"Round {number}")

    def _turn_box(self, turn_id: str, agent: str, number: int) -> None:
        if turn_id in self.turn_slots:
            return
        with self.transcript.chat_message(agent, avatar=avatar_for(agent)):
            query = self.queries.get(agent)
            header = f"**{escape_markdown(agent)}** · round {number}"
            if query is not None:
                header += f" · {query.tool} query{' (rewritten)' if query.rewritten else ''}: “{escape_markdown(query.query)}”"
            st.markdown(header)
            self.turn_slots[turn_id] = st.empty()
            self.turn_boxes[turn_id] = st.container()

    def _render_evidence(self) -> None:
        with self.evidence_slot.container():
            render_evidence_table(
                list(self.evidence.values()), self.cited_by, key=f"{self.key}-evidence-{len(self.evidence)}-{len(self.cited_by)}"
            )

    def _render_verdict(self, verdict: Verdict) -> None:
        with self.verdict_slot.container(border=True):
            conf = f" · confidence {verdict.confidence:.2f}" if verdict.confidence is not None else ""
            st.markdown(f"### Verdict {label_badge(verdict.label)}{conf}")
            st.caption(f"Decided by {escape_markdown(verdict.decided_by)}: {escape_markdown(verdict.stop_reason)}")
            if verdict.cited:
                cited = [self.evidence[c] for c in verdict.cited if c in self.evidence]
                st.markdown("**Rests on:** " + "; ".join(f"{c.id} ({escape_markdown(c.source_label)})" for c in cited))


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
