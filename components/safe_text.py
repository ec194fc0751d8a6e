"""Text from the web, the corpora and the models is shown as text, never as markup.

Streamlit's markdown renders links, images, emoji shortcodes, colour directives and LaTeX;
a page or a model answer could use them to inject tracking pixels or fake UI. Every such
text goes through ``escape_markdown`` before ``st.markdown``.
"""

from __future__ import annotations

from pipelines.safe_text import escape_markdown

__all__ = ["escape_markdown"]
