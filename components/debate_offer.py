"""The offer under a run whose debate was not run (desk's exhibits settled the claim, or no debate could change them): run it anyway."""

from __future__ import annotations

import streamlit as st

from components import state
from pipelines.core.text.safety import escape_markdown
from pipelines.protocols.base import find_protocol
from pipelines.record.digest import RunDigest
from pipelines.stages.exhibit_reading import NOT_DEBATED


def skipped_debate(run: RunDigest) -> str:
    """Why ``run``'s debate was not run (the verdict's own words, with the numbers); "" when it ran or the run is not this desk's.

    An imported run is the file's word, never started again from its settings (they could name another desk's endpoints).
    """
    verdict = run.verdict
    if verdict is None or verdict.decided_by not in NOT_DEBATED or run.imported is not None or not run.run_id or not run.claim:
        return ""
    return verdict.stop_reason or "desk's exhibits settle it"


def render_debate_offer(run: RunDigest, key: str) -> None:
    """A plain line saying the debate was not run and why, and "Run the debate anyway": Verify starts the same claim with the
    same settings and the debate forced (``belief.debate_when`` always), as the person on the page (checked when it starts)."""
    why = skipped_debate(run)
    if not why:
        return
    protocol = find_protocol(run.protocol)
    name = protocol.title if protocol is not None else run.protocol
    st.info(
        f"🧾 The debate ({escape_markdown(name)}) was not run: {escape_markdown(why)}. "
        "The verdict is desk's calibrated reading of its exhibits."
    )
    if st.button(
        "Run the debate anyway",
        key=f"debate-anyway.{key}",
        icon="⚖️",
        help="The same claim with the same settings, the debate run whatever the exhibits say (belief.debate_when: always).",
    ):
        state.request_debate(str(run.run_id), run.claim, run.config)
        st.switch_page("pages/verify.py")
