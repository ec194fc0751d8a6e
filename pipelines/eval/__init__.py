"""Evaluation: datasets with gold labels, the one label mapping, metrics, and the harness that runs them."""
