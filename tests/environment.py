"""Which ``DEBATEDESK_*`` variables are the shell's settings, which the test runner's own, and an environment without the former."""

from __future__ import annotations

import os

SETTINGS_PREFIX = "DEBATEDESK_"
# Variables for the test runner, not settings of the app: where this machine keeps the test
# PostgreSQL, the Check-COVID data and the model, and the golden file's regeneration switch.
TEST_RUNNER_VARIABLES = frozenset(
    {"DEBATEDESK_TEST_POSTGRES_URL", "DEBATEDESK_CHECKCOVID_DIR", "DEBATEDESK_MODEL_CACHE", "DEBATEDESK_REGOLDEN"}
)


def shell_settings() -> list[str]:
    """The ``DEBATEDESK_*`` settings in this process's environment (the test runner's own variables aside)."""
    return [name for name in os.environ if name.startswith(SETTINGS_PREFIX) and name not in TEST_RUNNER_VARIABLES]


def settings_free_environment() -> dict[str, str]:
    """This process's environment without its ``DEBATEDESK_*`` settings: for an app or CLI a test starts."""
    dropped = set(shell_settings())
    return {name: value for name, value in os.environ.items() if name not in dropped}
