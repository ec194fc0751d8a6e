"""The verdict card of a run, drawn from its digest (live or replayed): the checker's verdict over the model's, or how the run ended.

What the card says comes from ``pipelines.record.verdict_card``: one label vocabulary with the
protocol's own word beside it, the confidence or why there is none, the exhibits with their
quoted sentences and links, a plain reason with the engineering detail folded below, the
models' caveat and the audit trail. This module only lays it out and escapes it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.badges import label_badge
from pipelines.core.text.probability import decimal
from pipelines.core.text.safety import escape_markdown
from pipelines.core.text.times import to_the_second
from pipelines.record.digest import RunDigest, describe_intervention
from pipelines.record.verdict_card import COMMON_LABELS, AuditEntry, CardExhibit, CardLabel, ModelSide, VerdictCard, verdict_card


def render_verdict(slot: Any, run: RunDigest) -> None:
    """Fill ``slot`` from what the run has reached so far (live, or replayed from the store)."""
    card = verdict_card(run)
    if card is not None and card.checker is not None:
        _render_card(slot, card)
    elif run.failure is not None:
        slot.error(
            f"❌ The run failed: {escape_markdown(run.failure)}. Everything produced before the failure is shown below and kept in History."
        )
    elif run.interruption is not None:
        slot.warning(
            f"⏸️ The run was interrupted: {escape_markdown(run.interruption)}. Everything so far is kept; resume it from **History**."
        )
    elif card is not None and card.model is not None:
        _render_card(slot, card)
    else:
        slot.empty()


def _render_card(slot: Any, card: VerdictCard) -> None:
    """The card in four parts, the same four whoever leads: the checker's verdict (when set), the model's, the audit trail,
    and what an imported file says its checkers did (only for an imported run: never this desk's verdict).

    Streamlit redraws a block in place child by child: a card drawn again in the same script run (the model's, then the
    checker's over it, as a replay or a live page after an override does) must not have fewer children than the one it
    replaces, or the old card's extra elements stay below. With the same four parts, nothing is left over.
    """
    with slot.container(border=True):
        head, model_part, audit_part, imported_part = (
            st.container(),
            st.container(border=card.checker is not None),
            st.container(),
            st.container(),
        )
        if card.checker is not None:
            with head:
                _render_checker(card)
        if card.model is not None:
            with model_part:
                if card.checker is not None:
                    _render_model(card, card.model, heading="####", title="The model's verdict, kept in the record")
                else:
                    _render_model(card, card.model, heading="###", title="Verdict, leaning" if card.model.unmeasured else "Verdict")
        with audit_part:
            _render_audit(card.audit)
        with imported_part:
            _render_imported(card)


def card_label(label: CardLabel) -> str:
    """The common word as a badge, and the protocol's own word small beside it when it differs."""
    badge = label_badge(label.common) if label.common in COMMON_LABELS else f":blue-badge[{escape_markdown(label.common)}]"
    own = f" :small[the protocol's word: {escape_markdown(label.own)}]" if label.own != label.common else ""
    return badge + own


def _render_checker(card: VerdictCard) -> None:
    override = card.checker
    assert override is not None and card.label is not None
    st.markdown(f"### Checker's verdict {card_label(card.label)}")  # markup: card_label escapes the words
    st.caption(
        f"Set by {escape_markdown(override.by)} at {to_the_second(override.at)}"
        + (f". Why: {escape_markdown(override.note)}" if override.note else " (no note)")
    )


def _render_model(card: VerdictCard, model: ModelSide, *, heading: str, title: str) -> None:
    st.markdown(f"{heading} {escape_markdown(title)} {card_label(model.label)}")  # markup: card_label escapes the words
    if model.confidence is not None and model.unmeasured:
        st.markdown(
            f"**Ranking {decimal(model.confidence)}, unmeasured** :small[{escape_markdown(model.confidence_note)}]"
        )  # markup: escaped
        st.warning(f"🧭 {escape_markdown(model.ground_note)}")
    elif model.confidence is not None:
        st.markdown(f"**Confidence {decimal(model.confidence)}** :small[{escape_markdown(model.confidence_note)}]")  # markup: escaped note
        if model.ground_note:
            st.caption(escape_markdown(model.ground_note))
    else:
        st.markdown(f"**Confidence: not stated by this protocol** :small[{escape_markdown(model.confidence_note)}]")  # markup: escaped
    if model.rulings:
        st.warning(f"⚖️ Two rulings differ: {escape_markdown(model.rulings)}.")
    if card.caveat is not None:
        kind, text = card.caveat
        getattr(st, kind)(escape_markdown(text))
    if model.far_note:
        st.warning(f"🔭 {escape_markdown(model.far_note)}")
    st.markdown("**What it rests on**")
    for exhibit in model.exhibits:
        _render_exhibit(exhibit)
    if model.exhibits_note:
        st.caption(escape_markdown(model.exhibits_note))
    if model.reading_note:
        st.caption(escape_markdown(model.reading_note))
    st.markdown(f"**Why.** {escape_markdown(model.reason)}")
    st.caption(f"Decided by {escape_markdown(model.decided_by)}.")
    with st.expander("How this was decided (engineering detail)"):
        for line in model.detail:
            st.caption(escape_markdown(line))


def _render_exhibit(exhibit: CardExhibit) -> None:
    title = escape_markdown(exhibit.title)
    linked = f"[{title} ↗]({link_target(exhibit.url)})" if exhibit.url else title
    stance = f" · {escape_markdown(exhibit.stance)}" if exhibit.stance else ""
    quotes = "".join(f"  \n> “{escape_markdown(q)}”" for q in exhibit.quotes)
    # markup: every part is escaped above; the link target is a public http(s) URL with its brackets encoded
    st.markdown(f"**{escape_markdown(exhibit.id)}** · {linked} :small[{escape_markdown(exhibit.source)}{stance}]{quotes}")


def link_target(url: str) -> str:
    """A URL as a Markdown link target: the characters that would end or break the link are percent-encoded."""
    for ch, code in (("(", "%28"), (")", "%29"), ("<", "%3C"), (">", "%3E"), ("\\", "%5C"), (" ", "%20")):
        url = url.replace(ch, code)
    return url


def _render_audit(audit: tuple[AuditEntry, ...]) -> None:
    if not audit:
        return
    st.markdown("**Audit trail**")
    lines = [
        f"- {to_the_second(entry.at)} · {escape_markdown(entry.by or '?')} · {describe_intervention(entry.event, _quote)}"
        for entry in audit
    ]
    st.markdown("\n".join(lines))  # markup: times, escaped names, and describe_intervention quotes through escape_markdown


def _render_imported(card: VerdictCard) -> None:
    """What an imported file says, apart from this desk's trail: who imported it, what its check found, whom the file names."""
    imported = card.imported
    if imported is None:
        return
    st.markdown("**Imported record** :small[what the file says; none of it is this desk's verdict]")
    # markup: escaped fields and a time
    st.caption(
        f"📥 Imported from {escape_markdown(imported.source)} by {escape_markdown(imported.by)} at {to_the_second(imported.at)}. "
        f"The file's check: {escape_markdown(imported.check)}."
    )
    lines = [
        f"- {to_the_second(entry.at)} · the file says {escape_markdown(entry.by or '?')} · {describe_intervention(entry.event, _quote)}"
        for entry in card.imported_audit
    ]
    if lines:
        st.markdown("\n".join(lines))  # markup: times, escaped names, and describe_intervention quotes through escape_markdown


def _quote(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return escape_markdown(flat[: limit - 1] + "…" if len(flat) > limit else flat)
