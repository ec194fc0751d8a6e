"""The desk's signing key on the Settings page: the public half and its fingerprint, which an auditor compares with a record's."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pipelines.core.text.safety import escape_markdown
from pipelines.record.signing import SigningKeyError, desk_key


def render_desk_key(data_dir: Path) -> None:
    """The public key and fingerprint every JSON export is signed with (the key is made here on first use); never the private key."""
    st.header("Record signing key")
    try:
        key = desk_key(data_dir)
    except SigningKeyError as exc:
        st.error(f"⚠️ {escape_markdown(str(exc))}")
        return
    st.caption(
        "Every JSON record exported from this desk is signed with this ed25519 key; the private half stays in the data folder "
        "(readable by this desk's user only). Give the fingerprint to whoever audits your records: "
        "`python -m pipelines verify-record FILE --expect FINGERPRINT` checks a record against it."
    )
    st.markdown("**Fingerprint**")
    st.code(key.fingerprint, language=None)
    st.markdown("**Public key** :small[base64 of its 32 bytes]")
    st.code(key.public_b64, language=None)
