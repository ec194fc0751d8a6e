"""One owner of the session: components/state.py is the only file of the app that touches ``st.session_state``.

Every other page and component reads and writes what the session keeps through state.py's accessors, and a form's widgets
through ``state.keyed(PREFIX)``, so every key has one home and a new one cannot slip in beside the others. A test may set
the session up itself (Streamlit's ``AppTest.session_state``); the app may not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from components import state

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "components" / "state.py"
APP_FILES = sorted(
    {*ROOT.glob("*.py"), *(ROOT / "components").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), *(ROOT / "pipelines").rglob("*.py")}
)


def touches(path: Path) -> list[int]:
    """The lines of ``path`` that name ``session_state`` (``st.session_state``, ``streamlit.session_state``, an import of it)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        named = (
            (isinstance(node, ast.Attribute) and node.attr == "session_state")
            or (isinstance(node, ast.Name) and node.id == "session_state")
            or (isinstance(node, ast.ImportFrom) and any(alias.name == "session_state" for alias in node.names))
        )
        if named:
            lines.append(node.lineno)
    return sorted(lines)


@pytest.mark.parametrize("path", [p for p in APP_FILES if p != OWNER], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_but_state_touches_the_session(path: Path) -> None:
    found = touches(path)
    assert not found, (
        f"{path.relative_to(ROOT)} touches st.session_state on lines {found}: keep the key in components/state.py and read it "
        "through an accessor there, or a form's widgets through state.keyed(PREFIX)"
    )


def test_the_check_sees_a_direct_use() -> None:
    """The scan finds the forms a direct use takes (so the test above can fail)."""
    assert touches(OWNER), "components/state.py owns the session, so it touches it"


def test_a_keyed_form_reads_clears_and_forgets_its_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    session: dict[str, object] = {}
    monkeypatch.setattr(state.st, "session_state", session)
    form = state.keyed("queue.new.")
    assert form.key("text") == "queue.new.text"
    assert form.get("text", "none") == "none" and not form.has("text")
    session["queue.new.text"] = "  Masks work  "
    assert form.text("text") == "Masks work" and form.has("text")
    form.clear("text")
    assert session["queue.new.text"] == ""
    form.set("due", "2026-12-01")
    form.forget("due", "never-set")
    assert "queue.new.due" not in session
    assert form.setdefault("round", 1) == 1 and form.setdefault("round", 2) == 1
    box = state.keyed("history.open")  # one widget: its own key is the prefix
    box.set("", "run-1")
    assert box.get() == "run-1" and session["history.open"] == "run-1"


def test_a_warning_is_shown_once_a_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state.st, "session_state", {})
    assert state.first_time("spill_problems") is True
    assert state.first_time("spill_problems") is False
    assert state.first_time("something else") is True
