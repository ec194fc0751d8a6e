"""The benchmark scripts' tests share the test suite's fixtures (the MiniLM embedder, a demo data folder, services)."""

from tests.conftest import checkcovid_data_dir, checkcovid_dir, demo_data_dir, embedder, services, smollm2_gguf

__all__ = ["checkcovid_data_dir", "checkcovid_dir", "demo_data_dir", "embedder", "services", "smollm2_gguf"]
