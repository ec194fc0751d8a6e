"""Untrusted text shown as text, never as markup: one ``escape_markdown`` for the UI and the exports.

Streamlit's markdown (and any Markdown viewer a report is opened in) renders links, images,
emoji shortcodes, colour directives and LaTeX; a page or a model answer could use them to
inject tracking pixels or fake UI. Every such text goes through ``escape_markdown`` before
``st.markdown`` or into a Markdown report.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown would interpret; keep line breaks."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return escaped.replace("\n", "  \n")
