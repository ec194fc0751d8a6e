"""The checker's controls: the step-mode pause form, pasted evidence, and the verdict override.

A paused run's thread waits on its gate while the page shows this form; the buttons'
callbacks build a ``Review`` from the widgets and submit it, and the rerun that follows
streams the rest of the run. Nothing here blocks: Streamlit reruns freely while the run waits.
"""

from __future__ import annotations

import streamlit as st

from components import state
from components.sign_in import acting_person
from pipelines.core.domain import Evidence
from pipelines.core.errors import DebateDeskError
from pipelines.core.text.safety import escape_markdown
from pipelines.newsroom.access.roles import ALLOWED, NotAllowedError
from pipelines.record.store import RunStore
from pipelines.record.verdict_card import COMMON_LABELS, common_label
from pipelines.run.context import Review
from pipelines.run.runner import RunHandle
from pipelines.run.step_gate import PendingReview, override_verdict, pasted_evidence
from pipelines.run.tools.fetch import fetch_page
from pipelines.stages.decomposition import parse_triplets

K = state.REVIEW_PREFIX
KEEP, STRIKE, ADMIT = "keep", "strike", "admit"


def pause_title(round: int) -> str:
    return f"Paused after round {round}" if round > 0 else "Paused before the first search"


def render_checker_name() -> str:
    """The field every intervention is attributed to, at the top of every page's sidebar (components.pages draws it)."""
    state.prepare_checker_name_widget()
    st.sidebar.text_input(
        "Your name (audit trail)",
        key=state.CHECKER_NAME_WIDGET,
        on_change=state.remember_checker_name,
        max_chars=state.MAX_CHECKER_NAME,
        placeholder="e.g. Ana Ruiz",
        help="Every step-mode decision and verdict override is recorded with this name and the time. "
        "This browser keeps it (in a cookie, not the page's address) until you change it.",
    )
    return state.checker_name()


def render_review_form(handle: RunHandle, pending: PendingReview, evidence: dict[str, Evidence], struck: dict[str, str]) -> None:
    """The pause after a round: edit the next queries, add one, strike/admit/paste evidence, continue or stop."""
    round_key = f"{handle.run_id}.{pending.round}"
    with st.container(border=True):
        st.markdown(f"### ⏸️ {pause_title(pending.round)} — your turn")
        st.caption(
            "The run waits for you. Change what you want below, then **Continue** or **Stop and rule**. Every change is recorded with your name."
        )
        if not state.checker_name():
            st.warning("Enter **your name** in the sidebar first: the audit trail records who decided.")
        error = state.review_error()
        if error:
            st.error(f"⚠️ {escape_markdown(error)}")

        if pending.plan is not None:
            _render_plan(round_key, pending)
        st.markdown("**Next queries**")
        if pending.next_queries:
            for agent, query in pending.next_queries.items():
                st.text_input(f"Next query for {agent}", value=query, key=f"{K}{round_key}.q.{agent}", max_chars=500)
        elif pending.plan is not None:
            st.caption(f"The {escape_markdown(pending.plan.kind)} above guide the first searches: add a line to search for more.")
        else:
            st.caption("No more searches are planned for this run.")
        if pending.plan is None:  # at a plan pause, a line of the plan is the way to add a search
            st.text_input(
                "Add a query of your own (optional)",
                key=f"{K}{round_key}.extra",
                max_chars=500,
                placeholder="searched before the run goes on",
            )

        st.markdown(f"**Evidence** ({len(evidence)} item{'s' if len(evidence) != 1 else ''})")
        if evidence:
            with st.expander("Strike or admit items", expanded=False):
                for e in evidence.values():
                    _render_evidence_choice(round_key, e, struck)
        _render_paste(round_key)

        st.text_input("Note for the record (optional)", key=f"{K}{round_key}.note", max_chars=1000)
        left, right = st.columns(2)
        left.button(
            "Continue ▶️",
            type="primary",
            key=f"{K}{round_key}.continue",
            on_click=_submit,
            args=(handle, pending, evidence, False),
            width="stretch",
        )
        right.button(
            "Stop and rule ⏹️", key=f"{K}{round_key}.stop", on_click=_submit, args=(handle, pending, evidence, True), width="stretch"
        )


PLAN_HELP = {
    "premises": "One premise a line. Each premise is searched for on its own, and the court rules on each: add, remove or reword them.",
    "triplets": "One fact a line, as subject | relation | object. The researcher checks these facts: add, remove or reword them.",
}


def _render_plan(round_key: str, pending: PendingReview) -> None:
    assert pending.plan is not None
    kind = pending.plan.kind
    st.markdown(f"**The plan: {escape_markdown(kind)}**")
    st.text_area(
        f"Edit the {kind}",
        value="\n".join(pending.plan.items),
        key=f"{K}{round_key}.plan",
        height=40 + 28 * max(2, len(pending.plan.items)),
        max_chars=4000,
        help=PLAN_HELP.get(kind, "One item a line."),
    )


def _plan_lines(round_key: str, pending: PendingReview) -> tuple[str, ...] | None:
    """The plan as the checker left it; raises ValueError for a triplet line that is not one (nothing is lost: the form stays)."""
    if pending.plan is None:
        return None
    text = str(state.keyed(f"{K}{round_key}.").get("plan", "\n".join(pending.plan.items)))
    lines = tuple(" ".join(line.split()) for line in text.splitlines() if line.strip())
    if not lines:
        raise ValueError(f"the {pending.plan.kind} are empty: keep at least one line, or put the planned ones back")
    if pending.plan.kind == "triplets":
        parse_triplets("\n".join(lines))
    return lines


def _render_evidence_choice(round_key: str, e: Evidence, struck: dict[str, str]) -> None:
    cols = st.columns([3, 2, 3])
    status = f" · struck: {escape_markdown(struck[e.id])}" if e.id in struck else ""
    # markup: status is escaped above
    cols[0].markdown(f"**{escape_markdown(e.id)}** · {escape_markdown(e.source_label)}{status}  \n{escape_markdown(e.text[:220])}")
    options = [KEEP, ADMIT] if e.id in struck else [KEEP, STRIKE, ADMIT]
    cols[1].radio("Decision", options, key=f"{K}{round_key}.ev.{e.id}", horizontal=True, label_visibility="collapsed")
    cols[2].text_input(
        "Reason", key=f"{K}{round_key}.why.{e.id}", placeholder="reason (needed to strike or admit)", label_visibility="collapsed"
    )


def _render_paste(round_key: str) -> None:
    with st.expander("Paste evidence of your own (text, or a URL to fetch)", expanded=bool(state.pasted())):
        st.text_area("Text", key=f"{K}{round_key}.paste.text", height=80, max_chars=20_000)
        st.text_input("…or a URL (public web pages only)", key=f"{K}{round_key}.paste.url", placeholder="https://…", max_chars=2000)
        st.text_input("Title (optional)", key=f"{K}{round_key}.paste.title", max_chars=200)
        st.button("Add this evidence", key=f"{K}{round_key}.paste.add", on_click=_add_pasted, args=(round_key,), icon="📎")
        for i, e in enumerate(state.pasted()):
            c1, c2 = st.columns([6, 1])
            where = f" ({escape_markdown(e.url)})" if e.url else ""
            c1.markdown(f"📎 **{escape_markdown(e.title)}**{where}: {escape_markdown(e.text[:200])}")  # markup: where is escaped
            c2.button("Remove", key=f"{K}{round_key}.paste.rm.{i}", on_click=state.remove_pasted, args=(i,))


def _add_pasted(round_key: str) -> bool:
    """Callback: fetch the URL (public addresses only) or take the pasted text, and queue it for this pause.

    Returns whether it was added; when not, the review's error says why and the boxes keep what was typed."""
    paste = state.keyed(f"{K}{round_key}.paste.")
    text, url, title = paste.text("text"), paste.text("url"), paste.text("title")
    try:
        if url and not text:
            page = fetch_page(url)
            evidence = pasted_evidence("new", page.text, title=title or page.title or url, url=page.url, by=state.checker_name())
        else:
            evidence = pasted_evidence("new", text, title=title, url=url or None, by=state.checker_name())
    except (DebateDeskError, ValueError) as exc:
        state.set_review_error(f"could not add that evidence: {exc}")
        return False
    state.add_pasted(evidence)
    state.set_review_error(None)
    paste.clear("text", "url", "title")
    return True


def _paste_waiting(round_key: str) -> bool:
    """Whether the paste boxes hold text or an address the checker has not pressed "Add this evidence" for."""
    paste = state.keyed(f"{K}{round_key}.paste.")
    return any(paste.text(f) for f in ("text", "url"))


def build_review(round_key: str, pending: PendingReview, evidence: dict[str, Evidence], stop: bool) -> Review:
    """The Review the form's widgets describe; raises ValueError when a strike or admission lacks its reason."""
    form = state.keyed(f"{K}{round_key}.")
    queries = {a: form.text(f"q.{a}", q) for a, q in pending.next_queries.items()}
    extra = form.text("extra")
    struck: dict[str, str] = {}
    admitted: dict[str, str] = {}
    missing: list[str] = []
    for eid in evidence:
        choice = form.get(f"ev.{eid}", KEEP)
        reason = " ".join(form.text(f"why.{eid}").split())
        if choice == KEEP:
            continue
        if not reason:
            missing.append(eid)
        (struck if choice == STRIKE else admitted)[eid] = reason
    if missing:
        raise ValueError(f"give a reason for {', '.join(missing)}: a strike or an admission is recorded with its reason")
    return Review(
        queries={a: q for a, q in queries.items() if q},
        extra_queries=(extra,) if extra else (),
        struck=struck,
        admitted=admitted,
        added=tuple(state.pasted()),
        stop=stop,
        plan=_plan_lines(round_key, pending),
    )


def _submit(handle: RunHandle, pending: PendingReview, evidence: dict[str, Evidence], stop: bool) -> None:
    """Callback of Continue / Stop: hand the checker's review to the waiting run."""
    try:
        by = acting_person()
    except NotAllowedError as exc:
        state.set_review_error(str(exc))
        return
    if not by.name:
        state.set_review_error("enter your name in the sidebar: the audit trail records who decided")
        return
    round_key = f"{handle.run_id}.{pending.round}"
    # Evidence typed or pasted but not "Added" is the checker's too: a person who pasted it expects the run to use it, so it
    # is added now, as "Add this evidence" would (recorded in the trail with their name). If it cannot be (an address that
    # does not fetch), the run waits, the boxes keep it and the message says why.
    if _paste_waiting(round_key) and not _add_pasted(round_key):
        return
    try:
        review = build_review(round_key, pending, evidence, stop)
        note = state.keyed(f"{K}{round_key}.").text("note")
        handle.submit(review, by=by, note=note)
    except (ValueError, NotAllowedError) as exc:
        state.set_review_error(str(exc))
        return
    state.clear_review()


def render_override_form(store: RunStore, run_id: str, labels: tuple[str, ...], model_label: str | None, key: str) -> None:
    """Set the final verdict, in the one vocabulary, and the reason for it (required); the model's verdict stays in the record beside it.

    ``labels`` are the protocol's own words: each is shown beside the common word it reads as.
    """
    message = state.take_message(state.OVERRIDE_MESSAGE)
    if message:
        getattr(st, message[0])(message[1])
    user = state.signed_in_user()  # as this page run read it; the override itself reads the role again
    if user is not None and user.role not in ALLOWED["override"]:
        st.caption(f"🔒 Only an editor overrides verdicts; you are signed in as a {user.role}.")  # markup: a role of ours
        return
    # A form: choosing and typing send nothing until the button, so no rerun redraws the page (and folds the box) meanwhile.
    with st.expander("🧑‍⚖️ Override the verdict", expanded=False), st.form(f"{key}.override.form", border=False):
        options = list(COMMON_LABELS)
        model_common = common_label(model_label) if model_label else None
        index = options.index(model_common) if model_common in options else 0
        own = {common: [w for w in labels if common_label(w) == common and w != common] for common in options}
        st.selectbox(
            "Your verdict",
            options,
            index=index,
            key=f"{key}.override.label",
            format_func=lambda c: c + (f" (the protocol's word: {', '.join(own[c])})" if own[c] else ""),
        )
        st.text_area(
            "Reason (required)",
            key=f"{key}.override.note",
            max_chars=2000,
            height=80,
            placeholder="What you found and where: it goes in the audit trail, every export and the published ClaimReview.",
        )
        st.form_submit_button("Record my verdict", key=f"{key}.override.go", on_click=_override, args=(store, run_id, key), icon="🖊️")
        st.caption("The model's verdict is kept beside yours; both appear in the record and in every export.")


def _override(store: RunStore, run_id: str, key: str) -> None:
    # override_verdict reads the person's role again now: a checker, or an editor demoted since the form was drawn, is refused.
    try:
        evt = override_verdict(
            store,
            run_id,
            str(state.keyed(f"{key}.override.").get("label", "")),
            str(state.keyed(f"{key}.override.").get("note", "")),
            acting_person(),
        )
    except (ValueError, NotAllowedError) as exc:
        state.set_message(state.OVERRIDE_MESSAGE, ("error", f"⚠️ {escape_markdown(str(exc))}"))
        return
    # The name is the checker's own typing: shown as text, like everything a user supplied.
    state.set_message(state.OVERRIDE_MESSAGE, ("success", f"Recorded: {escape_markdown(evt.label)} by {escape_markdown(evt.by)}."))
