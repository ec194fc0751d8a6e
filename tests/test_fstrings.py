"""No text meant to be filled in is shown as written: a plain string joined to an f-string ("... {count} ..." beside
f"...") prints its braces to the user. The Calibrate page said "From {cal.DEFAULT_REFIT_AT} on, an editor can refit"."""

from __future__ import annotations

import io
import re
import tokenize

from tests.test_layout import ROOT, app_sources

F_PREFIX = re.compile(r"^[rbuRBU]*[fF]")
FIELD = re.compile(r"\{[A-Za-z_][\w.]*(\[[^\]]*\])?(\(\))?(![rsa])?(:[^{}]*)?\}")  # {name}, {a.b}, {x[0]}, {n:,}


def unfilled(source: str) -> list[int]:
    """Lines of plain string pieces that hold a replacement field and are joined to an f-string piece."""
    found: list[int] = []
    pieces: list[tokenize.TokenInfo] = []

    def joined() -> None:
        if len(pieces) > 1 and any(F_PREFIX.match(p.string) for p in pieces):
            found.extend(p.start[0] for p in pieces if not F_PREFIX.match(p.string) and FIELD.search(p.string))
        pieces.clear()

    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:  # Python 3.11: an f-string is one STRING token
            pieces.append(token)
        elif token.type not in (tokenize.NL, tokenize.COMMENT):
            joined()
    return found


def test_the_check_finds_a_plain_piece_beside_an_f_string() -> None:
    assert unfilled('x = (f"{a} claims. " "From {limit} on")\n') == [1]
    assert unfilled('x = (f"{a} claims. " f"From {limit} on")\n') == []
    assert unfilled('x = ("{a} is a template, " "filled later with format")\n') == [], "no f-string: a template"
    assert unfilled('x = (f"{a} " "and a literal brace {")\n') == []


def test_no_plain_piece_beside_an_f_string_holds_a_field() -> None:
    sources = [*app_sources(), *sorted((ROOT / "bench").glob("*.py"))]
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sources for line in unfilled(path.read_text())]
    assert not found, f"a plain string joined to an f-string holds a field that will print as written: {found}"
