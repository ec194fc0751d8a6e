"""The benchmark scripts' tests share the test suite's fixtures (the MiniLM embedder, a demo data folder, services)
and its environment cleared of the shell's settings."""

from tests.conftest import (
    _session_without_shell_settings,
    _without_shell_settings,
    checkcovid_data_dir,
    checkcovid_dir,
    demo_data_dir,
    embedder,
    services,
    smollm2_gguf,
)

__all__ = [
    "_session_without_shell_settings",
    "_without_shell_settings",
    "checkcovid_data_dir",
    "checkcovid_dir",
    "demo_data_dir",
    "embedder",
    "services",
    "smollm2_gguf",
]
