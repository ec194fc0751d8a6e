"""Which variables are the shell's settings for the app (its own ``DEBATEDESK_*``, and those the libraries it uses read:
OpenAI's client, LangChain's tracing, Streamlit's configuration), which the test runner's own, and an environment without
the former."""

from __future__ import annotations

import os
import socket
from pathlib import Path

SETTINGS_PREFIX = "DEBATEDESK_"
# OPENAI_API_KEY and OPENAI_BASE_URL are read by the app itself (pipelines/core/config.py); LANGCHAIN_*/LANGSMITH_* would turn on
# tracing to a remote service; STREAMLIT_* set the server's options for an app a test starts.
SETTINGS_PREFIXES = (SETTINGS_PREFIX, "OPENAI_", "LANGCHAIN_", "LANGSMITH_", "STREAMLIT_")
# Variables for the test runner, not settings of the app: where this machine keeps the test
# PostgreSQL, the Check-COVID data and the model, and the golden file's regeneration switch.
TEST_RUNNER_VARIABLES = frozenset(
    {
        "DEBATEDESK_TEST_POSTGRES_URL",
        "DEBATEDESK_TEST_POSTGRES_DIR",
        "DEBATEDESK_CHECKCOVID_DIR",
        "DEBATEDESK_MODEL_CACHE",
        "DEBATEDESK_REGOLDEN",
    }
)


def shell_settings() -> list[str]:
    """The settings in this process's environment that the app reads (the test runner's own variables aside)."""
    return [name for name in os.environ if name.startswith(SETTINGS_PREFIXES) and name not in TEST_RUNNER_VARIABLES]


def settings_free_environment() -> dict[str, str]:
    """This process's environment without the app's settings (``shell_settings``): for an app or CLI a test starts."""
    dropped = set(shell_settings())
    return {name: value for name, value in os.environ.items() if name not in dropped}


def free_port() -> int:
    """A loopback port nobody listens on now (for a server a test starts: the app, a Chroma server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_app_environment(data_dir: Path | str, **settings: str) -> dict[str, str]:
    """The environment for the app or a worker a test starts: the shell's settings dropped, every role on the fake backend,
    web search off, no model hub, ``data_dir`` as the data folder, and ``settings`` as DEBATEDESK_* variables."""
    return {
        **settings_free_environment(),
        "DEBATEDESK_DATA_DIR": str(data_dir),
        "DEBATEDESK_RETRIEVAL__WEB_SEARCH": "false",
        "HF_HUB_OFFLINE": "1",
        **{f"DEBATEDESK_{role}__BACKEND": "fake" for role in ("DEBATER", "JUDGE", "SCORER")},
        **{f"DEBATEDESK_{name.upper()}": value for name, value in settings.items()},
    }
