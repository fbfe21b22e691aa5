"""Data comparison of a figure's tidy CSV with its reference, per-column tolerances."""

import math

import numpy as np
import pandas as pd
import pytest

from replication.diff import compare_data
from replication.diff.deviation import Tolerance, column_tolerance

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
    assert column_tolerance(settings, "y") == Tolerance(1e-3, 0.5)
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
    result = compare_data(write(holed, tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert not result.passed and result.max_abs == math.inf and result.max_rel == math.inf
    # And the other way round: a number where the reference has NaN.
    result = compare_data(tmp_path / "ref.csv", write(holed, tmp_path), SETTINGS)
    assert not result.passed and result.max_abs == math.inf and result.max_rel == math.inf


@pytest.mark.parametrize("change", ["drop_row", "drop_column"])
def test_shape_change_fails(tmp_path, reference, change):
    changed = reference.iloc[:-1] if change == "drop_row" else reference.drop(columns="note")
    result = compare_data(write(changed, tmp_path), tmp_path / "ref.csv", SETTINGS)
    assert not result.passed
    assert ("rows" in result.message) if change == "drop_row" else ("note" in result.message)


def csv(tmp_path, name, **columns):
    path = tmp_path / f"{name}.csv"
    pd.DataFrame(columns).to_csv(path, index=False, float_format="%.17g")
    return path


@pytest.mark.filterwarnings("error")  # 0 / 0 and x / 0 are computed quietly
def test_every_field_of_a_hand_worked_comparison(tmp_path):
    """Reference y = [1, -4, 0, 2], regenerated [1, -4.5, 0.002, 2]; atol 1e-3, rtol 0.1, an envelope
    of 0.05 for y with k = 2. Tolerances 2 x 0.05 + 1e-3 + 0.1 |ref| = [0.201, 0.501, 0.101, 0.401];
    errors [0, 0.5, 0.002, 0]; ratios [0, 0.998, 0.0198, 0]: inside, worst at row 1.
    x has its own atol 0 and rtol 0 and moves by 1e-12 at x = 3: margin infinite. Labels are equal."""
    ref = csv(tmp_path, "ref", curve=["a", "a", "b", "b"], x=[0.0, 1.0, 3.0, 4.0], y=[1.0, -4.0, 0.0, 2.0])
    new = csv(tmp_path, "new", curve=["a", "a", "b", "b"], x=[0.0, 1.0, 3.0 + 1e-12, 4.0], y=[1.0, -4.5, 0.002, 2.0])
    settings = {"atol": 1e-3, "rtol": 0.1, "columns": {"x": {"atol": 0.0, "rtol": 0.0}}}
    result = compare_data(new, ref, settings, envelope={"y": 0.05}, k=2.0)
    table = result.columns.set_index("column")
    assert list(result.columns.columns) == [
        "column", "atol", "rtol", "envelope", "max_abs", "max_rel", "deviation", "tolerance", "margin", "n_outside",
        "reason",
    ]  # fmt: skip
    y = table.loc["y"]
    assert (y.atol, y.rtol, y.envelope, y.n_outside) == (1e-3, 0.1, 0.05, 0)
    assert y.deviation == pytest.approx(0.5) and y.tolerance == pytest.approx(0.501)
    assert y.margin == pytest.approx(0.5 / 0.501) and y.max_abs == pytest.approx(0.5)
    assert y.max_rel == math.inf  # 0.002 away from an exact 0: no relative bound
    # The floor dominates: 2 x 0.05 = 0.1 < 0.001 + 0.1 x 4 (the largest |ref|).
    assert y.reason == "floor: 2 x envelope 0.05 + atol 0.001 + rtol 0.1 |ref|"
    x = table.loc["x"]
    assert (x.atol, x.rtol, x.envelope, x.n_outside, x.tolerance) == (0.0, 0.0, 0.0, 1, 0.0)
    assert x.margin == math.inf and x.deviation == pytest.approx(1e-12, rel=1e-3)
    assert x.max_rel == pytest.approx(1e-12 / 3, rel=1e-3)
    assert x.reason == "floor (no envelope measured): 2 x envelope 0 + atol 0 + rtol 0 |ref|"
    curve = table.loc["curve"]
    assert (curve.deviation, curve.tolerance, curve.margin, curve.n_outside) == (0.0, 0.0, 0.0, 0)
    assert curve.reason == "labels: equal as text"
    assert not result.passed and result.worst_column == "x"
    assert result.max_abs == pytest.approx(0.5) and result.max_rel == math.inf
    assert result.message == ("data outside tolerance: x (1 values, max |d| 1e-12, max rel 3.33e-13, margin inf)")


def test_the_envelope_or_the_floor_names_the_reason(tmp_path):
    ref = csv(tmp_path, "ref", y=[10.0, 20.0])
    new = csv(tmp_path, "new", y=[10.0, 20.0])
    settings = {"atol": 0.5, "rtol": 0.1, "columns": {}}
    reason = compare_data(new, ref, settings, {"y": 1.0}, k=2.0).columns.set_index("column").reason
    assert reason["y"] == "floor: 2 x envelope 1 + atol 0.5 + rtol 0.1 |ref|"  # 2 < 0.5 + 0.1 x 20
    reason = compare_data(new, ref, settings, {"y": 2.0}, k=2.0).columns.set_index("column").reason
    assert reason["y"] == "envelope: 2 x envelope 2 + atol 0.5 + rtol 0.1 |ref|"  # 4 > 2.5
    result = compare_data(new, ref, settings, {"y": 2.0})  # k = 0 by default: the envelope does not count
    assert result.passed and result.worst_column == "" and result.message == "data within tolerance"
    assert result.columns.set_index("column").loc["y", "tolerance"] == pytest.approx(0.5 + 0.1 * 10)
    # Small values: the floor is atol + rtol x the largest |ref| (0.2 here), not at least 1.
    small_ref, small_new = csv(tmp_path, "small_ref", y=[0.1, 0.2]), csv(tmp_path, "small_new", y=[0.1, 0.2])
    reason = compare_data(small_new, small_ref, {"atol": 0.0, "rtol": 1.0}, {"y": 0.5}, k=1.0).columns.reason
    assert reason[0] == "envelope: 1 x envelope 0.5 + atol 0 + rtol 1 |ref|"  # 0.5 > 0.2


def test_a_value_at_exactly_its_tolerance_passes(tmp_path):
    """atol 0.25 and rtol 0 (exact binary fractions): 1.25 against 1.0 is exactly at the bound."""
    ref, new = csv(tmp_path, "ref", y=[1.0, 2.0]), csv(tmp_path, "new", y=[1.25, 2.0])
    result = compare_data(new, ref, {"atol": 0.25, "rtol": 0.0})  # no "columns" key: defaults only
    y = result.columns.set_index("column").loc["y"]
    assert result.passed and y.margin == 1.0 and y.n_outside == 0 and result.worst_column == "y"


def test_zero_tolerance_and_an_empty_table(tmp_path):
    ref, new = csv(tmp_path, "ref", y=[1.0, 2.0]), csv(tmp_path, "new", y=[1.0, 2.5])
    y = compare_data(new, ref, {"atol": 0.0, "rtol": 0.0}).columns.set_index("column").loc["y"]
    assert y.margin == math.inf and y.tolerance == 0.0 and y.deviation == 0.5  # nothing is allowed
    empty = tmp_path / "empty.csv"
    empty.write_text("y,label\n")  # no rows: pandas reads the columns as text
    result = compare_data(empty, empty, SETTINGS)
    assert result.passed and result.worst_column == "" and result.max_abs == 0.0 and result.max_rel == 0.0
    assert (result.columns.reason == "labels: equal as text").all() and (result.columns.margin == 0).all()


def test_changed_labels_and_columns_in_detail(tmp_path):
    ref = csv(tmp_path, "ref", curve=["a", "b", None], y=[1.0, 2.0, 3.0])
    new = csv(tmp_path, "new", curve=["a", "c", None], y=[1.0, 2.0, 3.0])
    result = compare_data(new, ref, SETTINGS)
    curve = result.columns.set_index("column").loc["curve"]
    assert (curve.n_outside, curve.margin, curve.deviation, curve.max_abs, curve.tolerance) == (1, *[math.inf] * 3, 0.0)
    assert result.message.startswith("data outside tolerance: curve (1 values, max |d| inf")
    assert result.worst_column == "curve"
    other = csv(tmp_path, "other", curve=["a", "b", None], z=[1.0, 2.0, 3.0], y=[1.0, 2.0, 3.0])
    result = compare_data(other, ref, SETTINGS)
    assert result.passed is False and result.columns.empty
    assert result.message == "columns differ: reference only [], regenerated only ['z']"
    assert compare_data(ref, other, SETTINGS).message == "columns differ: reference only ['z'], regenerated only []"
    short = csv(tmp_path, "short", curve=["a", "b"], y=[1.0, 2.0])
    result = compare_data(short, ref, SETTINGS)
    assert result.passed is False and result.message == "2 rows, reference has 3"


@pytest.mark.filterwarnings("error")  # no RuntimeWarning from NaN, infinities or zeros in a job's log
def test_nan_and_infinities_where_both_agree_or_not(tmp_path):
    """NaN against NaN and equal infinities are no change; a number against NaN or an infinity is
    unbounded, and its tolerance is the floor of a zero reference (atol: no rtol of an infinity)."""
    nan, inf = math.nan, math.inf
    ref = csv(tmp_path, "ref", same=[nan, inf, -inf, 0.0], a=[nan, 1.0, 1.0, 1.0], b=[inf, 1.0, 1.0, 1.0],
              c=[-inf, 1.0, 1.0, 1.0])  # fmt: skip
    new = csv(tmp_path, "new", same=[nan, inf, -inf, 0.0], a=[5.0, 1.0, 1.0, 1.0], b=[5.0, 1.0, 1.0, 1.0],
              c=[5.0, 1.0, 1.0, 1.0])  # fmt: skip
    result = compare_data(new, ref, {"atol": 1e-3, "rtol": 0.5})
    table = result.columns.set_index("column")
    same = table.loc["same"]
    assert (same.max_abs, same.max_rel, same.deviation, same.margin, same.n_outside) == (0.0, 0.0, 0.0, 0.0, 0)
    for column in "abc":
        row = table.loc[column]
        assert (row.deviation, row.margin, row.n_outside, row.max_rel) == (math.inf, math.inf, 1, math.inf)
        assert row.tolerance == pytest.approx(1e-3), column
    assert not result.passed


def test_an_all_nan_reference_column_has_a_floor_of_atol(tmp_path):
    ref = csv(tmp_path, "ref", y=[math.nan, math.nan])
    reason = compare_data(ref, ref, {"atol": 1e-3, "rtol": 0.5}, {"y": 1.0}, k=1.0).columns.reason[0]
    assert reason == "envelope: 1 x envelope 1 + atol 0.001 + rtol 0.5 |ref|"  # 1 > 0.001 + 0.5 x 0


def test_numbers_where_the_reference_has_text_differ_as_text(tmp_path):
    ref = csv(tmp_path, "ref", curve=["a", "b"], y=[1.0, 2.0])
    new = csv(tmp_path, "new", curve=[1, 2], y=[1.0, 2.0])
    for got, expected in ((new, ref), (ref, new)):
        curve = compare_data(got, expected, SETTINGS).columns.set_index("column").loc["curve"]
        assert curve.reason == "labels: equal as text" and curve.n_outside == 2


def test_every_failing_column_is_listed(tmp_path):
    ref = csv(tmp_path, "ref", x=[1.0, 2.0], y=[1.0, 2.0], label=["a", "b"])
    new = csv(tmp_path, "new", x=[1.5, 2.0], y=[1.0, 4.0], label=["a", "c"])
    result = compare_data(new, ref, {"atol": 0.25, "rtol": 0.0})
    assert result.message == (
        "data outside tolerance: x (1 values, max |d| 0.5, max rel 0.5, margin 2), "
        "y (1 values, max |d| 2, max rel 1, margin 8), label (1 values, max |d| inf, max rel inf, margin inf)"
    )
