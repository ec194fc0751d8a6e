"""What the desk, radar, madke and mermaid protocols add to a run's view: the exhibits' stances and the
aggregated verdict, confidence plot, omitted context, evidence picks, triplets, ReAct steps and the evidence memory.

``ProtocolPanels`` sits inside a RunView and receives every event after the run's digest has
read it; it writes into the transcript and the turn boxes the view hands it, and its panels
appear only when their events arrive, so other protocols look as before.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import streamlit as st

from components.belief_chart import BeliefPanel
from components.charts import ConfidencePoint, build_confidence_figure
from pipelines.calibration.files import calibration_origin
from pipelines.core.domain import Evidence
from pipelines.core.events import (
    AgreementChecked,
    BeliefRead,
    ClaimDecomposed,
    Event,
    EvidenceSelected,
    ExhibitStanceRead,
    LabelProbabilitiesEstimated,
    MemoryRecalled,
    MemoryUpdated,
    OmittedContextFound,
    ReasoningStepTaken,
    RunStarted,
    StageCompleted,
    StopRuleChecked,
    TurnCompleted,
    VerdictAggregated,
    VerdictReached,
)
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import when
from pipelines.record.digest import RunDigest

FINAL_JUDGES = ("Judge",)
ACTION_ICONS = {"corpus_search": "📚", "web_search": "🌐", "memory_lookup": "🧠", "answer": "✅"}


class ProtocolPanels:
    """Protocol-specific panels of one RunView, created lazily in ``area``; notes go into ``transcript`` and under a turn's box."""

    def __init__(self, area: Any, key: str, transcript: Any, turn_boxes: dict[str, Any]) -> None:
        self.area = area
        self.key = key
        self.transcript = transcript
        self.turn_boxes = turn_boxes  # turn id -> the container under its message, filled by the view as turns arrive
        self.slots: dict[str, Any] = {}
        self.config: dict[str, Any] = {}
        self.points: dict[int, ConfidencePoint] = {}
        self.sampling_noted = False
        self.last_method = "logprobs"
        self.omissions: list[OmittedContextFound] = []
        self.picks: dict[tuple[str, int], EvidenceSelected] = {}
        self.recalled: dict[str, MemoryRecalled] = {}
        self.used: set[str] = set()
        self.memory_note = ""
        self.stances: dict[str, ExhibitStanceRead] = {}  # desk: the latest reading of each exhibit
        self.first_stances: dict[str, ExhibitStanceRead] = {}
        self.aggregated: VerdictAggregated | None = None
        self.debate_note = ""
        self.belief = BeliefPanel(key)
        self._pending: dict[str, Callable[[], None]] | None = None  # slot name -> its redraw, while a batch is fed

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Feed many events, then redraw each panel once, as the last of them leaves it.

        A finished run's events are fed again on every rerun of its page; drawn event by event, desk's exhibit table was
        built, sent and drawn once per exhibit (25 times for one claim) and the belief chart once per reading. A panel's
        slot is still placed when its first event comes, so the panels keep their order.
        """
        self._pending = {}
        try:
            yield
        except BaseException:  # a rerun or stop raised mid-batch: nothing to draw, the next run draws it
            self._pending = None
            raise
        pending, self._pending = self._pending, None
        for redraw in pending.values():
            redraw()

    def _redraw(self, name: str, draw: Callable[[], None]) -> None:
        """Draw the panel in slot ``name`` now, or at the end of the batch being fed."""
        self._slot(name)  # placed at its first event, whenever it is drawn
        if self._pending is None:
            draw()
        else:
            self._pending[name] = draw

    def feed(self, evt: Event, run: RunDigest) -> None:
        match evt:
            case RunStarted(config=config):
                self.config = config
            case LabelProbabilitiesEstimated():
                self._probabilities(evt)
            case StopRuleChecked():
                self.transcript.caption(_stop_text(evt, self.last_method))  # markup: _stop_text escapes what it quotes
                self.points[evt.round] = ConfidencePoint(
                    round=evt.round,
                    phase=evt.phase,
                    verdict_confidence=evt.verdict_confidence,
                    stop_margin=evt.stop_margin,
                    label=evt.label,
                    stopped=evt.stop,
                )
                self._redraw("confidence", self._render_confidence)
            case OmittedContextFound():
                self.omissions.append(evt)
                self._redraw("omissions", self._render_omissions)
            case EvidenceSelected():
                self.picks[(evt.agent, evt.round)] = evt
                self._redraw("picks", self._render_picks)
            case TurnCompleted(turn=turn):
                pick = self.picks.get((turn.agent, turn.round))
                box = self.turn_boxes.get(turn.id)
                if pick is not None and box is not None:
                    box.caption("📌 " + escape_markdown(_pick_text(pick)))
            case AgreementChecked(round=number, agree=agree, consistent=consistent, reason=reason):
                self.transcript.caption(  # markup: a round number, marks and the escaped reason
                    f"⚖️ Judge after round {number}: agree {'✅' if agree else '❌'} · consistent {'✅' if consistent else '❌'}"
                    + (" → the debate stops" if agree and consistent else " → the debate goes on")
                    + (f" — {escape_markdown(reason)}" if reason else "")
                )
            case ClaimDecomposed():
                self._render_triplets(evt)
            case ReasoningStepTaken():
                self.transcript.markdown(_step_text(evt))  # markup: _step_text escapes what it quotes
            case MemoryRecalled():
                self.recalled[evt.evidence.id] = evt
                self._redraw("memory", self._render_memory)
            case MemoryUpdated(added=added, refreshed=refreshed):
                self.memory_note = f"🧠 Kept for later claims: {added} new item{'s' if added != 1 else ''}, {refreshed} already known."
                self._redraw("memory", self._render_memory)
            case ExhibitStanceRead(evidence_id=eid):
                self.first_stances.setdefault(eid, evt)
                self.stances[eid] = evt
                self._redraw("exhibits", lambda: self._render_exhibits(run))
            case VerdictAggregated():
                self.aggregated = evt
                self._redraw("exhibits", lambda: self._render_exhibits(run))  # now each exhibit's direction is known
            case StageCompleted(stage="debate", detail=detail) if self.stances:
                self.debate_note = detail
                self._redraw("exhibits", lambda: self._render_aggregate(run))
            case BeliefRead():
                self.belief.add(evt)
                self._redraw("belief", lambda: self.belief.render(self._slot("belief")))
            case VerdictReached(verdict=verdict):
                self.belief.verdict = verdict
                self._redraw("belief", lambda: self.belief.render(self._slot("belief")))
                self.used = {c for c in verdict.cited if c in self.recalled}
                if self.recalled:
                    self._redraw("memory", self._render_memory)
            case _:
                pass

    # --- desk ----------------------------------------------------------------------------

    def _render_exhibits(self, run: RunDigest) -> None:
        points_to = self.aggregated.points_to if self.aggregated is not None else {}
        rows = exhibit_rows(self.stances, self.first_stances, run.evidence, points_to)
        reread = any(s.round > 1 for s in self.stances.values())
        with self._slot("exhibits").container(border=True):
            st.markdown(f"**Exhibits and their stance** ({len(self.stances)} read)")
            st.caption(
                "Each bar is the model's probability, read from its answer's token probabilities and averaged over the orders "
                "the options were asked in: green supports the claim, red contradicts it, grey does not address it. "
                "'Points to' reads each exhibit against the model's usual lean (a small model answers 'contradicts' for most "
                "passages), as the verdict does."
                + (" Exhibits argued over in the debate show their first reading under the bars." if reread else "")
            )
            st.html(exhibit_table_html(rows))  # markup: exhibit_table_html escapes every value it places
            self._render_reading(run)

    def _render_aggregate(self, run: RunDigest) -> None:
        """The verdict box is the card's alone: here only how the exhibits were weighed, and whether a debate changed it."""
        if self.aggregated is not None:
            self._render_exhibits(run)

    def _render_reading(self, run: RunDigest) -> None:
        agg = self.aggregated
        if agg is None:
            return
        p = agg.probabilities
        how = (
            f"calibrated ({escape_markdown(agg.calibration)}: {escape_markdown(calibration_origin(agg.calibration))})"
            if agg.calibration != "uncalibrated"
            else "uncalibrated: no calibration has been fitted for this model, so the probability is the raw weighted stance"
        )
        st.markdown(  # markup: app text around escaped model and app values
            f"**Weighed together:** {escape_markdown(agg.reason)} "
            f"{p.get('NOT ENOUGH INFO', 0):.0%} that none of the exhibits addresses the claim."
        )
        st.caption(f"Probability {how}; uncalibrated {agg.raw:.2f}.")  # markup: app text around the escaped calibration name
        if self.debate_note:
            st.markdown(  # markup: app text, the escaped debate note, and an in-page link to the debate's first round
                f"**The debate changed the reading:** {escape_markdown(self.debate_note)} [See the debate](#round-1)"
            )

    # --- radar ---------------------------------------------------------------------------

    def _probabilities(self, evt: LabelProbabilitiesEstimated) -> None:
        self.last_method = evt.method
        if evt.method == "sampling" and not self.sampling_noted:
            self.sampling_noted = True
            self._slot("probability-note").info(f"🎲 Label probabilities: {escape_markdown(evt.note)}.")
        if evt.agent in FINAL_JUDGES:
            label = max(evt.probabilities, key=lambda k: evt.probabilities[k])
            self.points[evt.round] = ConfidencePoint(
                round=evt.round, phase="final judge", verdict_confidence=evt.probabilities[label], label=label
            )
            self._redraw("confidence", self._render_confidence)

    def _render_confidence(self) -> None:
        own = self.config.get(self.config.get("protocol") or "", {})  # the run's protocol's settings (radar's stop thresholds)
        figure = build_confidence_figure(list(self.points.values()), tau_s=own.get("tau_s"), tau_v=own.get("tau_v"))
        slot = self._slot("confidence")
        # Rendered here rather than by the page: the plot grows round by round while the run streams.
        slot.plotly_chart(figure, key=f"{self.key}-confidence-{len(self.points)}-{id(figure)}", width="stretch")

    def _render_omissions(self) -> None:
        # The Scientist often repeats a point in later rounds: each point once, with the rounds that raised it.
        points: dict[str, list[OmittedContextFound]] = {}
        for item in self.omissions:
            points.setdefault(" ".join(item.point.split()).lower(), []).append(item)
        with self._slot("omissions").container(border=True):
            st.markdown(f"**🔬 Omitted context the Scientist found** ({len(points)})")
            lines = []
            for items in points.values():
                cited = sorted({c for i in items for c in i.cited}, key=lambda c: int(c[1:]) if c[1:].isdigit() else 0)
                rounds = ", ".join(str(i.round) for i in items)
                note = f"round{'s' if len(items) > 1 else ''} {rounds}" + (f" · cites {escape_markdown(', '.join(cited))}" if cited else "")
                lines.append(f"- {escape_markdown(items[0].point)}  \n  _{note}_")
            st.markdown("\n".join(lines))  # markup: each line is escaped where it is built

    # --- madke ---------------------------------------------------------------------------

    def _render_picks(self) -> None:
        rows: dict[str, dict[str, str]] = {}
        for (agent, number), pick in sorted(self.picks.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            rows.setdefault(agent, {"debater": agent})[f"round {number}"] = _pick_text(pick)
        with self._slot("picks").container(border=True):
            st.markdown("**📌 Evidence each debater picked, per turn**")
            st.dataframe(pd.DataFrame(list(rows.values())), hide_index=True, width="stretch", key=f"{self.key}-picks-{len(self.picks)}")

    # --- mermaid -------------------------------------------------------------------------

    def _render_triplets(self, evt: ClaimDecomposed) -> None:
        source = {
            "model": "written by the model",
            "checker": "written by you (Settings: mermaid → Triplets)",
            "fallback": "the model gave none: the whole claim is one fact",
        }[evt.source]
        with self._slot("triplets").container(border=True):
            st.markdown(f"**🧩 Claim as triplets** · topic: {escape_markdown(evt.topic)} · _{source}_")  # markup: source is the app's
            frame = pd.DataFrame([{"subject": t.subject, "relation": t.relation, "object": t.object} for t in evt.triplets])
            st.dataframe(frame, hide_index=True, width="stretch", key=f"{self.key}-triplets")
            if evt.source != "checker":
                st.caption(
                    "To check different facts, write your own under **Settings: mermaid → Triplets (override)** in the sidebar and run again."
                )

    def _render_memory(self) -> None:
        rows = [
            {
                "id": eid,
                "used in answer": "✅" if eid in self.used else "",
                "matched by": r.match,
                "kept for claim": r.for_claim,
                "kept on": when(r.remembered_at),
                "found with query": r.evidence.query,
                "source": r.evidence.source_label,
                "text": r.evidence.text,
            }
            for eid, r in self.recalled.items()
        ]
        with self._slot("memory").container(border=True):
            st.markdown(
                f"**🧠 Recalled from memory** ({len(rows)} item{'s' if len(rows) != 1 else ''}, {len(self.used)} used in the answer)"
            )
            if rows:
                st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key=f"{self.key}-memory-{len(rows)}-{len(self.used)}")
            else:
                st.caption("Nothing recalled: no kept evidence matches this claim's entities or meaning.")
            if self.memory_note:
                st.caption(self.memory_note)  # markup: counts only

    def _slot(self, name: str) -> Any:
        if name not in self.slots:
            self.slots[name] = self.area.empty()
        return self.slots[name]


POINTS = {"supported": "↑ supported", "refuted": "↓ refuted", "unrelated": "· not addressed"}


def exhibit_rows(
    stances: dict[str, ExhibitStanceRead],
    first: dict[str, ExhibitStanceRead],
    evidence: dict[str, Evidence],
    points_to: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One row per exhibit read: the three stance probabilities, whether the orders agreed, which way it points, its quoted sentences, its source."""
    rows = []
    for eid, stance in stances.items():
        item = evidence.get(eid)
        p = stance.probabilities
        before = first.get(eid)
        row: dict[str, Any] = {
            "id": eid,
            "supports": p.get("SUPPORTS", 0.0),
            "contradicts": p.get("REFUTES", 0.0),
            "does not address": p.get("UNRELATED", 0.0),
            "orders agree": "yes" if stance.orders_agree else "no",
            "points to": POINTS.get((points_to or {}).get(eid, ""), ""),
            "quoted": " … ".join(stance.quoted),
            "source": (item.title or item.source_label or "") if item is not None else "",
            "url": (item.url or "") if item is not None and safe_link(item.url) else "",
        }
        if before is not None and before is not stance:  # read again after the debate
            was = before.probabilities
            row["first reading"] = (
                f"first read: supports {was.get('SUPPORTS', 0):.2f}, contradicts {was.get('REFUTES', 0):.2f}, "
                f"does not address {was.get('UNRELATED', 0):.2f}"
            )
        rows.append(row)
    return rows


STANCE_COLOURS = (("supports", "#2e7d32"), ("contradicts", "#c62828"), ("does not address", "#8a8a8a"))


def exhibit_table_html(rows: list[dict[str, Any]]) -> str:
    """The exhibits as an HTML table a screen reader can read: id, the three stance bars (coloured by meaning, each with its
    number), where it points, the quoted sentences in full and the source. Every value is escaped here."""
    head = "".join(
        f'<th scope="col" style="text-align:left;padding:4px 6px">{h}</th>'
        for h in ("Exhibit", "Stance", "Points to", "Quoted, and source")
    )
    body = []
    for row in rows:
        bars = "".join(
            f'<div style="display:flex;align-items:center;gap:6px;font-size:0.8em;white-space:nowrap">'
            f'<span style="width:7.5em">{name}</span>'
            f'<span aria-hidden="true" style="display:inline-block;width:70px;height:8px;background:#eee;border-radius:4px">'
            f'<span style="display:block;height:8px;width:{max(0.0, min(1.0, float(row[name]))) * 100:.0f}%;background:{colour};border-radius:4px"></span></span>'
            f"<span>{float(row[name]):.2f}</span></div>"
            for name, colour in STANCE_COLOURS
        )
        agree = "" if row.get("orders agree") == "yes" else '<div style="font-size:0.75em;color:#8a5a00">the two orders disagreed</div>'
        first = f'<div style="font-size:0.75em;color:#666">{html.escape(row["first reading"])}</div>' if row.get("first reading") else ""
        source = html.escape(row.get("source") or "")
        if row.get("url"):
            source = f'<a href="{html.escape(row["url"], quote=True)}" rel="noopener noreferrer" target="_blank">{source or "source"}</a>'
        quoted = html.escape(row.get("quoted") or "")
        cell = (f"“{quoted}”" if quoted else '<span style="color:#666">no sentence quoted</span>') + (
            f'<div style="font-size:0.8em;color:#555;margin-top:2px">{source}</div>' if source else ""
        )
        body.append(
            '<tr style="border-top:1px solid #e6e6e6;vertical-align:top">'
            f'<th scope="row" style="padding:4px 6px;text-align:left">{html.escape(str(row["id"]))}</th>'
            f'<td style="padding:4px 6px">{bars}{agree}{first}</td>'
            f'<td style="padding:4px 6px;white-space:nowrap">{html.escape(row.get("points to") or "not read yet")}</td>'
            f'<td style="padding:4px 6px">{cell}</td></tr>'
        )
    return (
        '<table style="width:100%;border-collapse:collapse;font-size:0.9em">'
        '<caption style="text-align:left;font-size:0.8em;color:#666">Each exhibit\'s stance as the model read it</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def safe_link(url: str | None) -> bool:
    """Only plain http(s) links become clickable."""
    return bool(url) and str(url).lower().startswith(("http://", "https://")) and not any(c in str(url) for c in " ()<>[]\n")


def _stop_text(evt: StopRuleChecked, method: str) -> str:
    s_ok, c_ok = evt.stop_margin >= evt.tau_s, evt.verdict_confidence >= evt.tau_v
    how = "token probabilities" if method == "logprobs" else "sampled answers"
    return (
        f"🛑 Stop check after the {escape_markdown(evt.phase)} ({how}): stop margin s = {evt.stop_margin:+.2f} {'≥' if s_ok else '<'} τs {evt.tau_s:+.2f} "
        f"{'✅' if s_ok else '❌'} · round judge {escape_markdown(evt.label)} with c = {evt.verdict_confidence:.2f} {'≥' if c_ok else '<'} τv {evt.tau_v:.2f} "
        f"{'✅' if c_ok else '❌'} → {'stop: the round judge decides' if evt.stop else 'the debate goes on'}"
    )


def _pick_text(pick: EvidenceSelected) -> str:
    if pick.none_found or not pick.evidence_ids:
        return "none found"
    return ", ".join(pick.evidence_ids)


def _step_text(evt: ReasoningStepTaken) -> str:
    icon = ACTION_ICONS.get(evt.action, "•")
    head = f"{icon} **Step {evt.step}** · {escape_markdown(evt.action)}" + (" (forced: step cap reached)" if evt.forced else "")
    if evt.query:
        head += f" “{escape_markdown(evt.query)}”"
    parts = [head]
    if evt.reason:
        parts.append(f"  \n_why:_ {escape_markdown(evt.reason)}")
    if evt.thought:
        parts.append(f"  \n_thought:_ {escape_markdown(evt.thought)}")
    return "".join(parts)
