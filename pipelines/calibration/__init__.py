"""Calibrations of the desk verdict, one versioned JSON file per model (bench/fit_desk_calibration.py writes them)."""
