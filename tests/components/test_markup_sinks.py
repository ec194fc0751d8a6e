"""Every text a page shows through a Markdown sink is escaped there, or marked as the app's own markup with a reason.

Streamlit's ``st.markdown``, ``st.success``, ``st.caption``... render Markdown: a claim, a model
answer, a web page or an imported file shown through one unescaped can load images, colour text,
draw fake links. This scan reads pages/ and components/ and fails on any such call whose text is
not a literal, not built only from escaped or app-made parts, and not marked ``# markup: <why>``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("components/*.py"), ROOT / "app.py"])
SINKS = {"html", "markdown", "success", "info", "warning", "error", "caption", "write", "toast", "title", "header", "subheader"}
# Calls whose result is safe Markdown: escapers, badges built from fixed vocabularies, and plain numbers or times.
SAFE_CALLS = {
    "escape_markdown",
    "md",
    "label_badge",
    "score_badge",
    "when",
    "_when",
    "_who",
    "len",
    "int",
    "round",
    "pause_title",
    "percent",
    "decimal",  # pipelines/probability_text: a probability as digits, "over", "under", ">" or "<"
}
NUMERIC_SPECS = ("d", "f", "%", ",", "e", "g")
MARKER = "# markup:"


def _safe(node: ast.expr) -> bool:
    match node:
        case ast.Constant(value=str()) | ast.Constant(value=int()) | ast.Constant(value=float()):
            return True
        case ast.JoinedStr(values=values):
            return all(_safe(v) for v in values)
        case ast.FormattedValue(value=value, format_spec=spec):
            numeric = spec is not None and any(isinstance(p, ast.Constant) and str(p.value).endswith(NUMERIC_SPECS) for p in ast.walk(spec))
            return numeric or _safe(value)
        case ast.BinOp(op=ast.Add(), left=left, right=right):
            return _safe(left) and _safe(right)
        case ast.IfExp(body=body, orelse=orelse):
            return _safe(body) and _safe(orelse)
        case ast.Call(func=ast.Name(id=name)) | ast.Call(func=ast.Attribute(attr=name)) if name in SAFE_CALLS:
            return True
        case ast.Call(func=ast.Attribute(attr="replace", value=inner)):  # escape_markdown(x).replace(...)
            return _safe(inner)
        case _:
            return False


def unescaped_calls(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SINKS):
            continue
        args = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "body"]
        if not args or all(_safe(a) for a in args):
            continue
        span = lines[node.lineno - 2 : (node.end_lineno or node.lineno)]  # the call's lines and the one above
        if any(MARKER in line for line in span):
            continue
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        found.append(f"{shown}:{node.lineno}: {ast.unparse(node)[:160]}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_markdown_sinks_carry_only_escaped_or_app_made_text(path: Path) -> None:
    assert unescaped_calls(path) == [], "escape the text with escape_markdown, or mark the app's own markup '# markup: why'"


def test_the_scan_catches_an_unescaped_claim(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import streamlit as st\n"
        "st.success(f'Imported: {summary.claim}')\n"
        "st.success(f'Imported: {escape_markdown(summary.claim)}')\n"
        "st.caption(f'{n:,} tokens')\n"
        "st.error(str(exc))\n"
        "st.markdown(text)  # markup: built from escaped parts above\n"
    )
    assert [line.split(": ", 1)[1] for line in unescaped_calls(probe)] == [
        "st.success(f'Imported: {summary.claim}')",
        "st.error(str(exc))",
    ]


def test_the_history_import_message_shows_the_imported_claim_as_text(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    from tests.components.conftest import fake_app

    at = fake_app(monkeypatch, demo_data_dir, timeout=120)
    claim = "![pixel](http://evil.example/p.png) :red[alarm] <b>bold</b>"
    at.session_state["import_message"] = ("success", f"Imported: {claim} (3 events).")
    at.switch_page("pages/history.py").run()
    shown = [s.value for s in at.success]
    assert shown and "\\!\\[pixel\\]\\(http" in shown[0] and "\\:red\\[alarm\\]" in shown[0] and "\\<b\\>" in shown[0], shown
