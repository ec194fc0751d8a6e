"""`make test-isolated` proves the tests ignore the shell's settings: it runs every test folder but the browser tests with
HOSTILE_SETTINGS exported. These tests keep that list honest: every setting the app reads is in it, each of its
``DEBATEDESK_*`` variables is one the settings really read (a misspelt one would be ignored and prove nothing), and the
target runs every folder."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pipelines.cli.acting import PASSWORD_ENV
from pipelines.core.config import ENV_PREFIX, AppSettings, RunConfig
from tests.environment import TEST_RUNNER_VARIABLES

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
# What the app reads of OpenAI's variables: the key and address (pipelines/core/config.py's openai_env), and the older
# name of the address that LangChain's OpenAI client still reads.
OPENAI_VARIABLES = {"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"}


def hostile_settings() -> dict[str, str]:
    text = re.search(r"^HOSTILE_SETTINGS := (.*?)(?<!\\)$", MAKEFILE, re.MULTILINE | re.DOTALL)
    assert text is not None, "the Makefile has no HOSTILE_SETTINGS"
    pairs = [word.split("=", 1) for word in shlex.split(text.group(1).replace("\\\n", " "))]
    return {name: value for name, value in pairs}


def settings_fields() -> dict[str, type[RunConfig] | type[AppSettings]]:
    """Each top-level field of the settings, as its ``DEBATEDESK_*`` name (a section's fields are ``NAME__FIELD``)."""
    return {f"{ENV_PREFIX}{name.upper()}": cls for cls in (RunConfig, AppSettings) for name in cls.model_fields}


def test_the_hostile_settings_cover_every_setting_the_app_reads() -> None:
    hostile = hostile_settings()
    missing = [
        name
        for name in settings_fields()
        if name not in TEST_RUNNER_VARIABLES and not any(v == name or v.startswith(name + "__") for v in hostile)
    ]
    assert not missing, f"HOSTILE_SETTINGS in the Makefile sets nothing for {missing}"
    assert OPENAI_VARIABLES | {PASSWORD_ENV} <= set(hostile)
    assert not TEST_RUNNER_VARIABLES & set(hostile), "the test runner's own variables are where this machine keeps things"


def test_each_hostile_setting_changes_what_the_settings_read(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = {RunConfig: RunConfig().model_dump(), AppSettings: AppSettings().model_dump()}
    hostile = hostile_settings()
    for name, value in hostile.items():
        monkeypatch.setenv(name, value)
    read = {RunConfig: RunConfig().model_dump(), AppSettings: AppSettings().model_dump()}
    fields = settings_fields()
    for name in hostile:
        if not name.startswith(ENV_PREFIX) or name == PASSWORD_ENV:
            continue
        top, _, rest = name.partition("__")
        cls = fields.get(top)
        assert cls is not None, f"{name} in HOSTILE_SETTINGS is not a setting (pipelines/core/config.py)"
        field = top.removeprefix(ENV_PREFIX).lower()
        before, after = defaults[cls][field], read[cls][field]
        if rest:
            before, after = before[rest.lower()], after[rest.lower()]
        assert before != after, f"{name}={hostile[name]} leaves {cls.__name__}.{field} at its default: it proves nothing"


def test_test_isolated_runs_every_test_folder_but_the_browser_tests() -> None:
    recipe = MAKEFILE.split("\ntest-isolated:", 1)[1].split("\n\n", 1)[0]
    assert "env $(HOSTILE_SETTINGS)" in recipe
    words = recipe.split()
    assert {"tests", "bench/tests", "--ignore=tests/e2e"} <= set(words), recipe
    assert not [w for w in words if w.startswith("tests/") and w != "--ignore=tests/e2e"], "a folder list leaves the rest out"
