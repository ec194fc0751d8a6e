"""Untrusted text made safe for where it lands: claims checked once, terminals, CSV cells, JSON in HTML, nested JSON.

Every entry point (the Verify page, the CLI, batch files, imported records) checks a claim
with ``check_claim_text``; every sink encodes for itself: ``terminal_text`` for a terminal,
``csv_cell`` for a spreadsheet, ``json_for_html`` for a ``<script>`` block, and
``load_json`` refuses JSON nested deeper than a limit with a message instead of a
``RecursionError``. See docs/security.md.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, TextIO
from urllib.parse import urlsplit

from corpora.jsonl import MAX_JSON_DEPTH, JsonTooDeepError, json_depth, load_json
from pipelines.core.errors import DebateDeskError, InvalidClaimError
from pipelines.core.text.addresses import citable_host

# Characters that change how text around them is displayed: bidi embeddings, overrides and isolates.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ALLOWED_CONTROLS = frozenset("\t\n\r")  # plain whitespace: folded into spaces


class UnsafeTextError(DebateDeskError, ValueError):
    """Text that cannot be used as it is; the message says which character, where, and what to do."""


class UnsafeClaimError(UnsafeTextError, InvalidClaimError):
    """A claim with control characters, direction overrides or nothing visible in it."""


def describe_char(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


def unsafe_char(text: str) -> tuple[int, str] | None:
    """The first control character (other than tab and line breaks), surrogate or bidi control in ``text``."""
    for i, ch in enumerate(text):
        if ch in _ALLOWED_CONTROLS:
            continue
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs") or ch in BIDI_CONTROLS:
            return i, ch
    return None


def is_invisible(text: str) -> bool:
    """True when nothing in ``text`` would show on screen: only spaces, format characters (zero-width, bidi) and marks."""
    return not any(
        not ch.isspace() and ch not in BLANK_LOOKING and unicodedata.category(ch) not in ("Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp")
        for ch in text
    )


# Letters and symbols drawn as nothing: the Braille blank, the Hangul fillers, the Khmer inherent vowels, the
# Mongolian vowel separator, musical-notation spacers. Their categories (So, Lo, Mn) call them visible; a screen does not.
BLANK_LOOKING = frozenset(
    "\u2800\u3164\u115f\u1160\uffa0\u17b4\u17b5\u180e\u034f\U0001d159\U0001d173\U0001d174\U0001d175\U0001d176\U0001d177\U0001d178\U0001d179\U0001d17a"
)


def check_claim_text(text: str | None, where: str = "the claim") -> str:
    """The claim with its whitespace folded; refuses control characters, bidi overrides and invisible-only text.

    A claim is stored, searched, sent to models, shown on pages and printed on terminals;
    NUL breaks PostgreSQL, ANSI/OSC escapes and BEL act on an auditor's terminal, bidi
    overrides make the shown text differ from the checked text. Refused with a message
    (not stripped silently), so the checker sees what was wrong with the text they gave.
    """
    raw = text or ""
    found = unsafe_char(raw)
    if found is not None:
        i, ch = found
        kind = "a direction override" if ch in BIDI_CONTROLS else "a control character"
        raise UnsafeClaimError(
            f"{where} contains {kind}, {describe_char(ch)}, at character {i + 1}; "
            "remove it (it can come with text copied from a terminal, a PDF or a word processor) and try again"
        )
    cleaned = " ".join(raw.split())
    if cleaned and is_invisible(cleaned):
        raise UnsafeClaimError(f"{where} has no visible characters (only zero-width or formatting characters); type the statement itself")
    return cleaned


_TERMINAL_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def terminal_text(text: str) -> str:
    """Text for a terminal: control characters (ESC, BEL, OSC...) and bidi controls shown as ``\\xNN``/``\\uNNNN``, never obeyed."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _TERMINAL_UNSAFE.sub(escape, text)


class TerminalSafeStream:
    """A text stream that writes through ``terminal_text``: what the CLI prints cannot drive the terminal."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A cell value safe to open in a spreadsheet: text starting like a formula gets a leading apostrophe.

    OWASP's advice for CSV injection; numbers stay numbers (a negative score is not a formula).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def public_http_url(url: str) -> bool:
    """An http(s) URL of a public host: no user info, no control characters or spaces, not localhost or a non-public IP literal.

    For links that leave the app (a ClaimReview's citations, a report's links): a ``javascript:``
    or ``data:`` URL, or one that points into the newsroom's own network, is not cited.
    """
    if not url or unsafe_char(url) is not None or any(ch.isspace() for ch in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host or parts.username or parts.password:
        return False
    return citable_host(host) is None  # a name's own address is not ours to check here (the fetch guard checks before fetching)


# What could close or change a <script> block, end a JavaScript line, or drive a terminal the file is printed on.
_HTML_UNSAFE = re.compile("[<>&\u2028\u2029\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def json_for_html(data: Any, *, indent: int | None = 2) -> str:
    """JSON that is safe inside an HTML ``<script>`` block (JSON-LD) and still parses to the same value.

    ``<`` ``>`` ``&`` become ``\\u003c`` ``\\u003e`` ``\\u0026``, so no ``</script>`` or ``<!--`` can end or
    change the block; U+2028/2029 are escaped for JavaScript parsers that treat them as line ends, and C1
    controls and bidi overrides so the file is inert in a terminal too.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _HTML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = [
    "MAX_JSON_DEPTH",
    "JsonTooDeepError",
    "TerminalSafeStream",
    "UnsafeClaimError",
    "UnsafeTextError",
    "check_claim_text",
    "csv_cell",
    "is_invisible",
    "json_depth",
    "json_for_html",
    "load_json",
    "public_http_url",
    "terminal_text",
    "unsafe_char",
]


# Markdown: untrusted text shown as text, never as markup (links, images, emoji shortcodes, colour
# directives and LaTeX would otherwise render in st.markdown and in a Markdown report).
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown would interpret; keep line breaks."""
    escaped = _SPECIAL.sub(r"\\\1", text)
    return escaped.replace("\n", "  \n")
