"""Corpus loaders, chunking into passages, and the bundled demo corpus (no streamlit, no pipelines)."""
