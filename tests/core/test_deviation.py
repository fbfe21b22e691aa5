"""Deviations and the tolerance rule (replication.diff.deviation), shared by the envelopes and the diff:
NaN and infinities, the tolerance k x envelope + atol + rtol |ref|, margins and their reasons."""

import math

import numpy as np
import pytest

from replication.diff.deviation import (
    Tolerance,
    allowed,
    column_tolerance,
    deviation,
    largest_floor,
    margin,
    margins,
    tolerance_reason,
)


@pytest.mark.filterwarnings("error")  # no RuntimeWarning from inf - inf, 0 / 0 or x / 0
def test_deviation_of_numbers_nans_and_infinities():
    actual = [1.5, np.nan, np.nan, 1.0, np.inf, np.inf, -np.inf, 1e-9, -3.0]
    expected = [1.0, np.nan, 2.0, np.nan, np.inf, 5.0, np.inf, 0.0, -2.0]
    measured = deviation(actual, expected)
    assert measured.same.tolist() == [False, True, False, False, True, False, False, False, False]
    inf = math.inf
    assert measured.absolute.tolist() == [0.5, 0.0, inf, inf, 0.0, inf, inf, 1e-9, 1.0]
    assert measured.relative.tolist() == [0.5, 0.0, inf, inf, 0.0, inf, inf, inf, 0.5]
    assert np.finfo(float).max not in measured.absolute  # unbounded is inf, never the largest float


def test_deviation_of_booleans_and_no_values():
    measured = deviation(np.array([True, False]), np.array([True, True]))
    assert measured.absolute.tolist() == [0.0, 1.0] and measured.relative.tolist() == [0.0, 1.0]
    empty = deviation([], [])
    assert empty.absolute.shape == (0,) and empty.absolute.max(initial=0.0) == 0.0


def test_the_tolerance_rule():
    tolerance = Tolerance(atol=1e-3, rtol=0.1)
    expected = np.array([1.0, -4.0, np.nan, np.inf])
    # k x envelope + atol + rtol |ref|; a NaN or infinite reference gets the floor atol alone
    assert allowed(expected, tolerance, 0.05, 2.0) == pytest.approx([0.201, 0.501, 0.101, 0.101])
    assert allowed(expected, tolerance, 0.05, 0.0) == pytest.approx([0.101, 0.401, 0.001, 0.001])
    assert largest_floor(expected, tolerance) == math.inf  # the largest |ref| is the infinity
    assert largest_floor([1.0, -4.0, np.nan], tolerance) == pytest.approx(0.401)
    assert largest_floor([], tolerance) == 1e-3
    assert tolerance.text == "atol 0.001 + rtol 0.1 |ref|"


@pytest.mark.filterwarnings("error")
def test_margins_are_deviation_over_tolerance():
    measured = deviation([1.1, 2.0, 3.0, np.nan, 5.0], [1.0, 2.0, 2.0, np.nan, 4.0])
    limit = np.array([0.2, 0.0, 0.5, 0.0, 0.0])
    assert margins(measured, limit) == pytest.approx([0.5, 0.0, 2.0, 0.0, math.inf])  # no tolerance: unbounded
    assert margin(0.5, 0.25) == 2.0 and margin(0.25, 0.5) == 0.5
    assert margin(0.0, 0.0) == 0.0 and margin(1e-12, 0.0) == math.inf
    assert margin(math.nan, 1.0) == math.inf  # not measurable (e.g. image sizes differ)


def test_column_tolerance_and_reason():
    settings = {"atol": 1e-6, "rtol": 1e-2, "columns": {"y": {"atol": 1e-3}, "z": {"rtol": 0.5}}}
    assert column_tolerance(settings, "x") == Tolerance(1e-6, 1e-2)
    assert column_tolerance(settings, "y") == Tolerance(1e-3, 1e-2)
    assert column_tolerance(settings, "z") == Tolerance(1e-6, 0.5)
    assert column_tolerance({"atol": 0, "rtol": 0}, "x") == Tolerance(0.0, 0.0)
    assert tolerance_reason(3.0, 0.1, 0.2, "f", True) == "envelope: 3 x envelope 0.1 + f"
    assert tolerance_reason(1.0, 0.1, 0.2, "f", True) == "floor: 1 x envelope 0.1 + f"
    assert tolerance_reason(3.0, 0.0, 0.2, "f", False) == "floor (no envelope measured): 3 x envelope 0 + f"


def test_both_comparisons_hold_an_image_to_the_one_rule():
    """``make diff`` and ``make compare`` take an image's tolerance from ``image_tolerance``: changed
    there, both change."""
    import replication.diff.against_reference as against_reference
    import replication.diff.figure_changes as figure_changes
    from replication.diff.deviation import image_tolerance

    assert image_tolerance(0.01, 0.002, 3.0) == pytest.approx(0.016) and image_tolerance(0.01, 0.0, 3.0) == 0.01
    for module in (against_reference, figure_changes):
        assert module.image_tolerance is image_tolerance
