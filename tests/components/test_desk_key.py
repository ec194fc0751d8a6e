"""AppTest: the Settings page shows the desk's signing key (fingerprint and public key), never the private half."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.config import AppSettings
from pipelines.record.signing import KEY_FILE, desk_key
from tests.components.conftest import fake_app


def test_settings_show_the_public_key_and_its_fingerprint(monkeypatch: pytest.MonkeyPatch, demo_data_dir: Path) -> None:
    app = fake_app(monkeypatch, demo_data_dir, timeout=120)
    app.switch_page("pages/settings.py").run()
    assert not app.exception
    data_dir = AppSettings().data_dir
    key = desk_key(data_dir)
    shown = [c.value for c in app.code]
    assert key.fingerprint in shown and key.public_b64 in shown
    private = (data_dir / KEY_FILE).read_text()
    body = [line for line in private.splitlines() if line and not line.startswith("-----")]
    assert body and not any(line in s for line in body for s in shown), "the private key is never shown"
