"""Export a stored run: the JSON record, a Markdown report, a CSV row, schema.org ClaimReview.

Pure functions over a run's summary and events (nothing is read from or written to a store here): the UI offers them as
downloads, the CLI writes them to files. The JSON record is ``pipelines.record.record_file``'s (written and read there);
every free-form field in the reports is escaped for where it lands (docs/security.md). Bringing a record back in is
``pipelines.record.importer``'s.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pipelines import __version__
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import (
    Event,
    ModelServerRestarted,
    QueryIssued,
    RoundStarted,
    RunFailed,
    RunInterrupted,
    RunResumed,
    StageFailed,
    TurnCompleted,
    WebSearchUnavailable,
)
from pipelines.core.text.probability import decimal
from pipelines.core.text.safety import (
    csv_cell,
    escape_markdown,
    json_for_html,
    public_http_url,
    terminal_text,
)
from pipelines.core.text.times import to_the_second
from pipelines.record.claimreview import RATINGS, Review, build_claimreview
from pipelines.record.comments import Comment
from pipelines.record.digest import RunDigest, describe_intervention, digest
from pipelines.record.record_file import FORMAT, SCHEMA_VERSION, to_json
from pipelines.record.signing import DeskKey
from pipelines.record.store import RunSummary
from pipelines.record.verdict_card import (
    AuditEntry,
    CardLabel,
    ModelSide,
    audit_trail,
    common_label,
    imported_summary,
    imported_trail,
    verdict_card,
)

ExportFormat = Literal["json", "md", "csv", "claimreview"]
EXPORT_FORMATS: dict[str, tuple[str, str]] = {  # format -> (file suffix, MIME type)
    "json": (".json", "application/json"),
    "md": (".md", "text/markdown"),
    "csv": (".csv", "text/csv"),
    "claimreview": (".jsonld", "application/ld+json"),
}


# --- Markdown ---------------------------------------------------------------------------------


def md(text: str) -> str:
    """Untrusted text (web pages, model answers) as literal Markdown: no links, images or HTML get through.

    Control characters (ANSI escapes, BEL) are shown as ``\\xNN``: a report is read in terminals too.
    """
    return terminal_text(escape_markdown(text))


def _cell(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return md(flat[: limit - 1] + "…" if len(flat) > limit else flat)


def to_markdown(summary: RunSummary, events: Sequence[Event], comments: Sequence[Comment] = ()) -> str:
    """A readable report of the run: verdicts, interventions, rounds, evidence and cost."""
    run = digest(events)
    lines = [f"# Fact-check: {md(summary.claim)}", ""]
    lines += ["| | |", "| --- | --- |", *[f"| {k} | {v} |" for k, v in _summary_rows(summary, run)], ""]
    card = verdict_card(run)
    if card is not None and card.model is not None:
        lines += _card_lines(card.model)
    lines += _reasoning_lines(run)
    interventions = [_describe_intervention(e) for e in run.interventions]
    if interventions:
        lines += ["## Checker's interventions (audit trail)", "", *interventions, ""]
    lines += _imported_lines(run)
    if comments:
        lines += ["## Comments", ""]
        lines += [f"- {to_the_second(c.at)}, {md(c.author)} on {md(c.about)}: {_cell(c.text, 4000)}" for c in comments]
        lines.append("")
    lines += ["## Transcript", ""]
    for e in events:
        lines += _transcript_lines(e, run)
    lines += ["", "## Evidence", ""]
    lines += _evidence_lines(run)
    lines += _call_lines(run)
    lines.append(f"_Exported by DebateDesk {__version__} on {to_the_second(time.time())}. Record format {FORMAT} v{SCHEMA_VERSION}._")
    return "\n".join(lines) + "\n"


def _summary_rows(summary: RunSummary, run: RunDigest) -> list[tuple[str, str]]:
    """The report's opening table: the verdicts, what the run was set up with, how it went and what it cost."""
    config = summary.config
    verdict_line = _label_md(summary.verdict) if summary.verdict else "none (the run did not reach one)"
    if summary.confidence is not None:
        verdict_line += f" (confidence {decimal(summary.confidence)})"
    rows = [("Model's verdict", verdict_line)]
    override = run.override  # this desk's own: what an imported file says a checker set is listed apart below
    if override is not None:
        rows.append(
            (
                "Checker's verdict",
                f"{_label_md(override.label)} by {md(override.by or '?')} at {to_the_second(override.at)}: {_cell(override.note, 500)}",
            )
        )
    if run.imported is not None:
        rows.append(("Imported", _cell(imported_summary(run), 1000)))
    models = ", ".join(
        f"{role}: {md(str(config.get(role, {}).get('backend', '?')))}/{md(str(config.get(role, {}).get('model') or 'default'))}"
        for role in ("debater", "judge", "scorer")
        if role in config
    )
    web = config.get("retrieval", {}).get("web_search")
    rows += [
        ("Protocol", md(summary.protocol)),
        ("Models", models or "—"),
        (
            "Corpus",
            md(str(config.get("corpus", "—"))) + ("" if web is None else f"; web search {'on' + _web_failed(run) if web else 'off'}"),
        ),
        (
            "Run",
            f"`{summary.id}` · {md(summary.status)} · started {to_the_second(summary.created_at)} · finished {to_the_second(summary.finished_at)}",
        ),
        ("Attempts", str(summary.attempts)),
        ("Cost", run.cost.describe()),
        ("App version", md(summary.app_version)),
    ]
    return rows


def _reasoning_lines(run: RunDigest) -> list[str]:
    """The model's rationale, the exhibits it rests on and who decided to stop; nothing for a run without a verdict."""
    model_verdict, evidence = run.verdict, run.evidence
    if model_verdict is None:
        return []
    lines = ["## The model's reasoning", "", md(model_verdict.rationale or "(no rationale)"), ""]
    if model_verdict.cited:
        lines += [
            "Rests on: "
            + ", ".join(f"{md(c)} ({_cell(evidence[c].source_label, 80)})" if c in evidence else md(c) for c in model_verdict.cited),
            "",
        ]
    if model_verdict.stop_reason:
        lines += [f"Decided by {md(model_verdict.decided_by)}: {md(model_verdict.stop_reason)}", ""]
    return lines


def _imported_lines(run: RunDigest) -> list[str]:
    """Where an imported record came from and what its file says its checkers did, apart from this desk's audit trail."""
    imported = run.imported
    if imported is None:
        return []
    lines = [
        "## Imported record (not this desk's audit trail)",
        "",
        f"Imported from {_cell(imported.source, 200)} by {md(imported.by)} on {to_the_second(imported.at)}. "
        f"The file's check: {_cell(imported.check, 600)}.",
        "",
    ]
    said = [_describe_intervention(e) for e in run.imported_interventions]
    if said:
        lines += ["What the file says its checkers did (the file's word; none of it is this desk's verdict):", "", *said, ""]
    return lines


def _transcript_lines(e: Event, run: RunDigest) -> list[str]:
    """One event in the transcript: a round's heading, a search, a turn, a failure, a restart or a resume; nothing for the rest."""
    match e:
        case RoundStarted(round=number):
            return [f"### Round {number}", ""]
        case QueryIssued(agent=agent, query=query, tool=tool, round=number):
            return [f"- {md(agent)} searched {md(tool)} (round {number}): “{_cell(query, 300)}”"]
        case WebSearchUnavailable(agent=agent, fallback=fallback, round=number):
            instead = f"; {md(fallback)} instead" if fallback else ""
            return [f"- 🌐 the web could not be searched for {md(agent or 'the run')} (round {number}): {_cell(e.why, 300)}{instead}"]
        case TurnCompleted(turn=turn):
            label = f" — **{md(turn.label)}**" if turn.label else ""
            lines = ["", f"**{md(turn.agent)}**, round {turn.round}{label}", "", "> " + md(turn.text).replace("  \n", "  \n> "), ""]
            repeated = run.echoes.get(turn.id)
            if repeated is not None:
                lines += [
                    f"*Nearly word for word {md(repeated.agent)}'s round {repeated.round} answer: the model repeated its opponent.*",
                    "",
                ]
            return lines
        case StageFailed(stage=stage, reason=reason):
            return [f"- ⚠️ {md(stage)} failed: {_cell(reason, 500)}"]
        case ModelServerRestarted(role=role, reason=reason, seconds=seconds):
            return [
                f"- 🔁 the model server stopped ({to_the_second(e.at)}: {_cell(reason, 300)}) and was started again "
                f"in {seconds:.0f} s; the {md(role)}'s call it broke was asked again"
            ]
        case RunFailed(reason=reason):
            return [f"- ❌ the run failed ({to_the_second(e.at)}): {_cell(reason, 500)}"]
        case RunInterrupted(reason=reason):
            return [f"- ⏸️ the run was interrupted ({to_the_second(e.at)}): {_cell(reason, 500)}"]
        case RunResumed(attempt=attempt):
            return [f"- ▶️ resumed ({to_the_second(e.at)}), attempt {attempt}"]
        case _:
            return []


def _web_failed(run: RunDigest) -> str:
    """ ", but unavailable for 2 of its 3 web queries" where the web could not be searched; "" where it could."""
    if (outage := run.web_outage) is None:
        return ""
    failed, searched = outage
    return f", but unavailable for {failed} of its {searched} web queries"


def _evidence_lines(run: RunDigest) -> list[str]:
    """The evidence table (where each item came from, who cited it, whether it was struck), then each item's text."""
    evidence, cited_by, struck = run.evidence, run.cited_by, run.struck
    if not evidence:
        return ["No evidence was retrieved.", ""]
    lines = ["| id | source | title | link | found by | query | round | score | cited by | status |", "| --- " * 10 + "|"]
    for ev in evidence.values():
        link = f"<{ev.url}>" if ev.url and public_http_url(ev.url) and not re.search(r"[\s<>\\`|]", ev.url) else ""
        score = f"{ev.retrieval_score:.3f}" if ev.retrieval_score is not None else ""
        status = f"struck: {_cell(struck[ev.id], 120)}" if ev.id in struck else "used"
        lines.append(
            f"| {md(ev.id)} | {md(ev.source_label if ev.source != 'web' else 'web')} | {_cell(ev.title, 80)} | {link} | {md(ev.found_by)} | "
            f"{_cell(ev.query, 80)} | {ev.round} | {score} | {md(', '.join(cited_by.get(ev.id, [])))} | {status} |"
        )
    lines.append("")
    for ev in evidence.values():
        lines += [f"**{md(ev.id)}** {_cell(ev.title, 120)}: {_cell(ev.text, 1500)}", ""]
    return lines


def _call_lines(run: RunDigest) -> list[str]:
    """The table of the run's model calls, one row a call; nothing for a run that made none."""
    calls = run.calls
    if not calls:
        return []
    return [
        "## Model calls",
        "",
        "| # | role | model | tokens in | of which the server reused | tokens out | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {i} | {md(c.role)} | {md(c.model)} | {c.tokens_in} | {c.tokens_reused} | {c.tokens_out} | {c.seconds:.2f} |"
            for i, c in enumerate(calls, 1)
        ),
        "",
    ]


def _label_md(label: str) -> str:
    """A verdict in the one vocabulary, bold, with the protocol's own word beside it when it differs."""
    card = CardLabel.of(label)
    return f"**{md(card.common)}**" + (f" (the protocol's word: {md(card.own)})" if card.own != card.common else "")


def _card_lines(model: ModelSide) -> list[str]:
    """The verdict card in Markdown: the label in the common vocabulary, the confidence or why none, the exhibits with their quotes."""
    label = _label_md(model.label.own)
    confidence = (
        f"{decimal(model.confidence)}, {md(model.confidence_note)}"
        if model.confidence is not None
        else f"not stated by this protocol: {md(model.confidence_note)}"
    )
    lines = ["## The model's verdict", "", f"{label} · confidence {confidence}", "", md(model.reason), ""]
    if model.rulings:
        lines += [f"Two rulings differ: {md(model.rulings)}.", ""]
    if model.exhibits:
        lines += ["What it rests on:", ""]
        for e in model.exhibits:
            link = f" <{e.url}>" if e.url and not re.search(r"[\s<>\\`|]", e.url) else ""
            stance = f" · {md(e.stance)}" if e.stance else ""
            lines.append(f"- **{md(e.id)}** {_cell(e.title, 120)} ({_cell(e.source, 120)}){stance}{link}")
            lines += [f"  > “{_cell(q, 600)}”" for q in e.quotes]
        lines.append("")
    if model.exhibits_note:
        lines += [md(model.exhibits_note), ""]
    return lines


def _describe_intervention(e: Event) -> str:
    return f"- {to_the_second(e.at)} · {md(getattr(e, 'by', ''))} · {describe_intervention(e, _cell)}"


# --- CSV ---------------------------------------------------------------------------------------

CSV_FIELDS = (
    "run_id", "claim", "protocol", "status", "final_verdict", "model_verdict", "model_verdict_protocol_word", "confidence",
    "checker_verdict", "checker_by", "checker_at", "checker_reason", "model_verdict_before_override", "audit_trail",
    "imported", "imported_audit_trail", "rests_on",
    "model_calls", "cached_calls", "tokens_in", "tokens_out", "spent", "model_seconds", "wall_seconds", "started", "finished",
)  # fmt: skip


def to_csv(summary: RunSummary, events: Sequence[Event]) -> str:
    """The run as one CSV row for a spreadsheet: both verdicts, the audit trail (who, when, what), what it rests on, its cost.

    Verdicts are in the one vocabulary (SUPPORTED / REFUTED / NOT ENOUGH INFO), the protocol's
    own word in a column of its own. The checker's columns and the audit trail are this desk's
    own; what an imported file says its checkers did has columns apart. Every cell goes
    through ``csv_cell``: a claim or a note like ``=HYPERLINK(..)`` stays text.
    """
    run = digest(events)
    cost = run.cost
    override = run.override
    final = run.final_label
    row: dict[str, Any] = {
        "run_id": summary.id,
        "claim": summary.claim,
        "protocol": summary.protocol,
        "status": summary.status,
        "final_verdict": common_label(final) if final else "",
        "model_verdict": common_label(summary.verdict) if summary.verdict else "",
        "model_verdict_protocol_word": summary.verdict or "",
        "confidence": summary.confidence if summary.confidence is not None else "",
        "checker_verdict": common_label(override.label) if override is not None else "",
        "checker_by": override.by if override is not None else "",
        "checker_at": to_the_second(override.at) if override is not None else "",
        "checker_reason": override.note if override is not None else "",
        "model_verdict_before_override": common_label(override.model_verdict.label)
        if override is not None and override.model_verdict
        else "",
        "audit_trail": _trail(audit_trail(run)),
        "imported": imported_summary(run),
        "imported_audit_trail": _trail(imported_trail(run)),
        "rests_on": "; ".join(f"{e.id} ({e.source_label})" for e in run.cited_evidence()),
        "model_calls": cost.calls,
        "cached_calls": cost.cached_calls,
        "tokens_in": cost.tokens_in,
        "tokens_out": cost.tokens_out,
        "spent": round(cost.spent, 6) if cost.priced else "",  # empty: the run had no prices (not zero)
        "model_seconds": round(cost.model_seconds, 3),
        "wall_seconds": round(cost.wall_seconds, 3),
        "started": to_the_second(summary.created_at),
        "finished": to_the_second(summary.finished_at),
    }
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_FIELDS), lineterminator="\r\n")
    writer.writeheader()
    writer.writerow({name: csv_cell(terminal_text(value) if isinstance(value, str) else value) for name, value in row.items()})
    return buffer.getvalue()


def _trail(entries: Sequence[AuditEntry]) -> str:
    return " | ".join(f"{to_the_second(a.at)} · {a.by or '?'} · {a.what}" for a in entries)


# --- schema.org ClaimReview -------------------------------------------------------------------


def claimreview_refusal(summary: RunSummary) -> str | None:
    """Why History offers no ClaimReview for this run, or None when it does: a fact-check is a claim a person of this desk
    reviewed (an override set here), never a run's model verdict nobody reviewed, nor an imported file's word."""
    if not summary.own:
        return "an imported run is the file's word, not a fact-check of this desk: no ClaimReview is offered for it"
    if not (summary.checker_verdict and summary.checker_by):
        return (
            "nobody on this desk has reviewed this run's verdict: an editor overrides it here (the verdict the desk stands by, "
            "with the reason), or reviews its claim on the claims queue and publishes it there"
        )
    return None


def to_claimreview(summary: RunSummary, events: Sequence[Event], *, public_url: str = "", publisher: str = "DebateDesk") -> dict[str, Any]:
    """schema.org ClaimReview JSON-LD for the run's final verdict: this desk's checker's when they set one, else the model's.

    Built by the one ClaimReview builder (``pipelines.record.claimreview``), the explanation whole;
    a verdict an imported file says someone set is never published as this desk's.
    """
    run = digest(events)
    override = run.override  # this desk's own
    label = override.label if override is not None else summary.verdict
    if not label:
        raise DebateDeskError(
            f"run {summary.id} has no verdict ({summary.status}); a ClaimReview needs one — resume the run or set a verdict"
        )
    name = common_label(label)
    if name not in RATINGS:
        raise DebateDeskError(
            f"run {summary.id}'s verdict {label[:40]!r} is not one a ClaimReview rates (SUPPORTED, REFUTED, NOT ENOUGH INFO)"
        )
    rationale = run.verdict.rationale if run.verdict is not None else ""
    if name != label:  # the protocol's own word, as a detail
        rationale = f"The protocol's word: {label}. {rationale}"
    explanation = override.note if override is not None and override.note else rationale
    published = datetime.fromtimestamp(summary.finished_at or summary.created_at, UTC).date().isoformat()
    checked = override is not None and bool(override.by)
    return build_claimreview(
        Review(
            claim=summary.claim,
            label=name,
            explanation=" ".join(explanation.split()),
            url=f"{public_url.rstrip('/')}/{summary.id}" if public_url else f"urn:debatedesk:run:{summary.id}",
            published_on=published,
            organisation=publisher,
            editor=override.by if checked and override is not None else "",
            modified_on=datetime.fromtimestamp(override.at, UTC).date().isoformat() if checked and override is not None else "",
            citations=run.cited_evidence() or list(run.evidence.values()),
        )
    )


def export_run(
    summary: RunSummary,
    events: Sequence[Event],
    fmt: str,
    *,
    public_url: str = "",
    comments: Sequence[Comment] = (),
    signer: DeskKey | None = None,
    stored_chain: str = "",
) -> str:
    """The run in one of EXPORT_FORMATS, as text; the JSON record (signed with ``signer`` when given) and the Markdown
    report carry the desk's comments on it."""
    if fmt == "json":
        return to_json(summary, events, comments, signer=signer, stored_chain=stored_chain)
    if fmt == "md":
        return to_markdown(summary, events, comments)
    if fmt == "csv":
        return to_csv(summary, events)
    if fmt == "claimreview":  # pasted into a page's <script type="application/ld+json">: nothing in it may close the block
        return json_for_html(to_claimreview(summary, events, public_url=public_url)) + "\n"
    raise ValueError(f"unknown export format {fmt!r}; choose one of: {', '.join(EXPORT_FORMATS)}")


def export_filename(summary: RunSummary, fmt: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", summary.claim.lower()).strip("-")[:40] or "run"
    suffix = EXPORT_FORMATS[fmt][0]
    return f"debatedesk-{summary.id}-{slug}{'.claimreview' if fmt == 'claimreview' else ''}{suffix}"
