"""The app under Streamlit's AppTest, on the fake backend, offline, with a data folder of the test's choosing."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def fake_app(monkeypatch: pytest.MonkeyPatch, data_dir: Path, *, page: str = "app.py", timeout: float = 180, **env: str) -> AppTest:
    """``page`` run as a checker would see it: every role on the fake model, no web, no response cache
    (one test's answers must not be replayed in another's), and ``env`` as extra ``DEBATEDESK_*`` settings."""
    for role in ("DEBATER", "JUDGE", "SCORER"):
        monkeypatch.setenv(f"DEBATEDESK_{role}__BACKEND", "fake")
        monkeypatch.setenv(f"DEBATEDESK_{role}__CACHE", "off")
    monkeypatch.setenv("DEBATEDESK_RETRIEVAL__WEB_SEARCH", "false")
    monkeypatch.setenv("DEBATEDESK_DATA_DIR", str(data_dir))
    for name, value in env.items():
        monkeypatch.setenv(f"DEBATEDESK_{name.upper()}", value)
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
    at.run()
    return at
