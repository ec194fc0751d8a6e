"""A calibrated probability short of certainty is never shown as 100% or 1.00."""

import pytest

from pipelines.core.text.probability import decimal, percent


@pytest.mark.parametrize(
    ("p", "as_percent", "as_decimal"),
    [
        (0.996, "over 99%", ">0.99"),
        (0.995, "over 99%", ">0.99"),
        (0.994, "99%", "0.99"),
        (1.0, "100%", "1.00"),
        (0.5, "50%", "0.50"),
        (0.004, "under 1%", "<0.01"),
        (0.0, "0%", "0.00"),
        (0.006, "1%", "0.01"),
    ],
)
def test_probabilities_near_certainty_say_over_or_under(p: float, as_percent: str, as_decimal: str) -> None:
    assert percent(p) == as_percent
    assert decimal(p) == as_decimal
