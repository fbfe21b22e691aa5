"""Data comparison of a figure's tidy CSV with its reference, per-column tolerances."""

import numpy as np
import pandas as pd
import pytest

from replication.diff import column_tolerance, compare_data

SETTINGS = {"atol": 1e-9, "rtol": 1e-6, "columns": {}}


@pytest.fixture
def reference(tmp_path):
    x = np.linspace(0, 1, 40)
    frame = pd.concat(
        [pd.DataFrame({"curve": "a", "x": x, "y": 1 + x**2}), pd.DataFrame({"curve": "b", "x": x, "y": 2 - x})],
        ignore_index=True,
    )
    frame["note"] = np.where(frame.x > 0.5, "late", None)
    frame.to_csv(tmp_path / "ref.csv", index=False)
    return frame


def write(frame, tmp_path):
    frame.to_csv(tmp_path / "new.csv", index=False)
    return tmp_path / "new.csv"


def test_identical_data_passes(tmp_path, reference):
    result = compare_data(write(reference.copy(), tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert result.passed and result.max_abs == 0 and result.max_rel == 0


def test_five_percent_perturbation_of_one_curve_fails(tmp_path, reference):
    perturbed = reference.copy()
    perturbed.loc[perturbed.curve == "a", "y"] *= 1.05
    result = compare_data(write(perturbed, tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert not result.passed
    assert result.worst_column == "y"
    assert result.max_rel == pytest.approx(0.05)
    y = result.columns.set_index("column").loc["y"]
    assert y.n_outside == (reference.curve == "a").sum()
    assert "y (40 values" in result.message


@pytest.mark.parametrize(("rtol", "passes"), [(0.04, False), (0.06, True)])
def test_per_column_tolerance(tmp_path, reference, rtol, passes):
    perturbed = reference.copy()
    perturbed["y"] *= 1.05
    settings = {**SETTINGS, "columns": {"y": {"rtol": rtol}}}
    assert compare_data(write(perturbed, tmp_path), tmp_path / "ref.csv", settings).passed is passes


def test_column_tolerance_falls_back_to_defaults():
    settings = {"atol": 1e-3, "rtol": 1e-2, "columns": {"y": {"rtol": 0.5}}}
    assert column_tolerance(settings, "y") == (column_tolerance(settings, "y").__class__(1e-3, 0.5))
    assert column_tolerance(settings, "x").rtol == 1e-2


def test_absolute_tolerance_near_zero(tmp_path, reference):
    shifted = reference.copy()
    shifted["x"] += 1e-10  # below atol where the reference is 0
    assert compare_data(write(shifted, tmp_path), tmp_path / "ref.csv", SETTINGS).passed


def test_changed_label_fails(tmp_path, reference):
    relabelled = reference.copy()
    relabelled.loc[0, "curve"] = "c"
    result = compare_data(write(relabelled, tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert not result.passed and "curve (1 values" in result.message


def test_nan_where_the_reference_has_a_number_fails(tmp_path, reference):
    holed = reference.copy()
    holed.loc[3, "y"] = np.nan
    assert not compare_data(write(holed, tmp_path), tmp_path / "ref.csv", SETTINGS).passed


@pytest.mark.parametrize("change", ["drop_row", "drop_column"])
def test_shape_change_fails(tmp_path, reference, change):
    changed = reference.iloc[:-1] if change == "drop_row" else reference.drop(columns="note")
    result = compare_data(write(changed, tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert not result.passed
    assert ("rows" in result.message) if change == "drop_row" else ("note" in result.message)
