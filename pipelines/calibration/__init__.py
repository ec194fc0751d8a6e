"""Calibrations of the desk verdict: where a model's is found and kept (files), and how one is fitted (fitting); shipped defaults in data/."""
