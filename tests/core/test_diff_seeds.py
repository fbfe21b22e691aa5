"""Seed spread in a comparison: the per-seed values a claim's reason lists, a changed claim's seed
columns and verdict, and per figure whether B's seed ranges leave A's (a point's rows grouped by their
labels, the measured column that left most often reported)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from replication.diff.seeds import (
    BEYOND,
    NO_SEEDS,
    UNKNOWN,
    WITHIN,
    claim_seed_columns,
    claim_seed_verdict,
    figure_seed_spread,
    seed_values,
)


def test_the_per_seed_values_of_a_reason():
    assert seed_values("measured 0.9; per seed 0.722, 0.942") == [0.722, 0.942]
    assert seed_values("per seed (smoothed) 0.0262, 0.0259") == [0.0262, 0.0259]
    assert seed_values("per seed: 1e-3, -2.5E+2, +4") == [0.001, -250.0, 4.0]
    assert seed_values("per seed 0.5, 0.6, then flat") == [0.5, 0.6]  # the list ends where the numbers do
    assert seed_values("per seed 7") == [7.0]
    assert seed_values("mean 0.5 over 3 seeds") == []
    for not_text in (np.nan, None, 0.5, b"per seed 1, 2"):  # a claim without a reason, or not text
        assert seed_values(not_text) == []


def claim(n_runs, holds_fraction, reason="") -> dict:
    return {"n_runs": n_runs, "holds_fraction": holds_fraction, "reason": reason}


def test_a_changed_claims_seed_columns_describe_each_side():
    a = claim(3, 0.5, "per seed 0.123456, 0.2, 0.3")
    b = claim(2, 1.0, "per seed 0.9, 0.95")
    assert claim_seed_columns(a, b) == {
        "holds_in_a": "2/3",  # 0.5 of 3 runs, rounded to whole runs
        "seeds_a": "0.1235-0.3",
        "holds_in_b": "2/2",
        "seeds_b": "0.9-0.95",
        "seed_noise": WITHIN,  # A's seeds already disagree
    }
    one_run = claim_seed_columns(claim(1, 1.0, "measured 0.4"), claim(np.nan, 0.0))
    assert one_run == {"holds_in_a": "1/1", "seeds_a": "", "holds_in_b": "", "seeds_b": "", "seed_noise": UNKNOWN}
    assert claim_seed_columns(claim(2, np.nan), b)["holds_in_a"] == ""  # no fraction recorded
    assert claim_seed_columns(claim(0, 0.5), b)["holds_in_a"] == ""  # no runs


@pytest.mark.parametrize(
    ("a", "b", "verdict"),
    [
        (claim(1, 0.0, "per seed 0.1"), claim(2, 1.0, "per seed 0.9, 0.95"), UNKNOWN),  # one run on a side
        (claim(2, 0.0, "per seed 0.1, 0.2"), claim(np.nan, 1.0), UNKNOWN),
        (claim(2, 0.0, "per seed 0.1, 0.2"), claim(2, 1.0, "per seed 0.9, 0.95"), BEYOND),  # agree, disjoint
        (claim(2, 0.0, "per seed 0.9, 0.2"), claim(2, 1.0, "per seed 0.9, 0.95"), WITHIN),  # ranges touch
        (claim(2, 1.0, "per seed 0.9, 0.95"), claim(2, 0.0, "per seed 0.96, 0.99"), BEYOND),  # B above A
        (claim(2, 1.0, "per seed 0.9, 0.95"), claim(2, 0.0, "per seed 0.95, 0.99"), WITHIN),  # touching above
        (claim(2, 1.0, "per seed 0.9, 0.95"), claim(2, 0.0, "per seed 0.8, 0.9"), WITHIN),  # touching below
        (claim(2, 0.5, "per seed 0.1, 0.9"), claim(2, 1.0, "per seed 0.91, 0.95"), WITHIN),  # A's seeds disagree
        (claim(2, 0.0, "per seed 0.1, 0.2"), claim(2, np.nan, "per seed 0.91, 0.95"), WITHIN),  # B's unknown
        (claim(2, 0.0, "per seed 0.1, 0.2"), claim(2, 1.0, "measured 0.9"), BEYOND),  # no values on B's side
        (claim(2, 0.0, "measured 0.1"), claim(2, 1.0, "per seed 0.05, 0.95"), BEYOND),  # none on A's
    ],
)
def test_a_changed_claims_seed_verdict(a, b, verdict):
    assert claim_seed_verdict(a, b) == verdict


def write(frame: pd.DataFrame, path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def per_seed(points: list[dict], seeds: dict[int, dict[str, list]]) -> pd.DataFrame:
    """Tidy rows: for each seed, each point's labels with that seed's values (one per point)."""
    rows = []
    for seed, columns in seeds.items():
        for index, labels in enumerate(points):
            rows.append({**labels, "seed": seed, **{column: values[index] for column, values in columns.items()}})
    return pd.DataFrame(rows)


# x an integer label, signal a float one (a grid coordinate, the same for every seed) that alone does not
# tell the points apart.
POINTS = [{"x": x, "signal": 0.5 * (x // 2)} for x in range(4)]


def test_a_figures_seed_spread_is_read_point_by_point_in_its_most_changed_column(tmp_path):
    a = per_seed(
        POINTS,
        {
            1: {
                "early": [0.0, 0.1, 0.2, 0.3],
                "loss": [1.0] * 4,
                "acc": [0.5] * 4,
                "steps": [10.0] * 4,
                "only_a": [3.0] * 4,
            },
            2: {
                "early": [0.05, 0.15, 0.25, 0.35],
                "loss": [1.2] * 4,
                "acc": [0.6] * 4,
                "steps": [11.0] * 4,
                "only_a": [4.0] * 4,
            },
        },
    )
    b = per_seed(
        POINTS,
        {
            # early: not measured in B; steps: counted in B (integers), not a measured value.
            1: {"early": [np.nan] * 4, "loss": [2.0, 2.0, 0.8, 1.2], "acc": [0.7, 0.55, 0.55, 0.55], "steps": [20] * 4},
            2: {"early": [np.nan] * 4, "loss": [2.1, 2.1, 1.0, 1.5], "acc": [0.8, 0.65, 0.65, 0.65], "steps": [21] * 4},
        },
    )
    # loss: above A at two points, touching A's range from below and from above at the others.
    spread = figure_seed_spread(write(a, tmp_path / "a.csv"), write(b, tmp_path / "b.csv"))
    assert spread == {
        "seed_column": "loss",
        "disjoint_share": 0.5,
        "seed_range_a": pytest.approx(0.2),
        "seed_noise": WITHIN,
    }
    b.loc[b.x == 2, "loss"] -= 0.01  # now below A there: disjoint at three points of four
    spread = figure_seed_spread(write(a, tmp_path / "a.csv"), write(b, tmp_path / "b.csv"))
    assert (spread["seed_column"], spread["disjoint_share"], spread["seed_noise"]) == ("loss", 0.75, BEYOND)


def test_a_float_grid_coordinate_says_which_point_a_row_is_on(tmp_path):
    a = per_seed([{"signal": 0.0}, {"signal": 1.0}], {1: {"loss": [1.0, 5.0]}, 2: {"loss": [1.1, 5.1]}})
    b = per_seed([{"signal": 0.0}, {"signal": 1.0}], {1: {"loss": [2.0, 5.05]}, 2: {"loss": [2.1, 5.08]}})
    spread = figure_seed_spread(write(a, tmp_path / "a.csv"), write(b, tmp_path / "b.csv"))
    # Disjoint at signal 0, overlapping at signal 1 (over both points at once they would overlap).
    assert spread == {
        "seed_column": "loss",
        "disjoint_share": 0.5,
        "seed_range_a": pytest.approx(0.1),
        "seed_noise": WITHIN,
    }


def test_a_figure_of_one_point_and_columns_that_left_as_often(tmp_path):
    a = pd.DataFrame({"seed": [1, 2, 3], "first": [1.0, 1.05, 1.1], "second": [1.0, 1.2, 1.3]})
    b = pd.DataFrame({"seed": [1, 2, 3], "first": [2.0, 2.1, 2.05], "second": [5.0, 6.0, 5.5]})
    spread = figure_seed_spread(write(a, tmp_path / "a.csv"), write(b, tmp_path / "b.csv"))
    # Every row a seed's value of the one point; of two columns disjoint as often, the first is named.
    assert spread == {
        "seed_column": "first",
        "disjoint_share": 1.0,
        "seed_range_a": pytest.approx(0.1),
        "seed_noise": BEYOND,
    }


def test_without_per_seed_data_on_both_sides_the_spread_is_unknown(tmp_path):
    seeded = write(pd.DataFrame({"seed": [1, 2], "loss": [1.0, 1.1]}), tmp_path / "seeded.csv")
    one_seed = write(pd.DataFrame({"seed": [1, 1], "loss": [1.0, 1.1]}), tmp_path / "one_seed.csv")
    unseeded = write(pd.DataFrame({"run": [1, 2], "loss": [1.0, 1.1]}), tmp_path / "unseeded.csv")
    no_measure = write(pd.DataFrame({"seed": [1, 2], "count": [3, 4]}), tmp_path / "no_measure.csv")
    missing = str(tmp_path / "missing.csv")

    def is_empty(spread: dict, noise: str) -> bool:
        return (
            spread["seed_noise"] == noise
            and spread["seed_column"] == ""
            and math.isnan(spread["disjoint_share"])
            and math.isnan(spread["seed_range_a"])
            and len(spread) == 4
        )

    for a, b in ((seeded, missing), (missing, seeded), (seeded, unseeded), (unseeded, seeded)):
        assert is_empty(figure_seed_spread(a, b), NO_SEEDS), (a, b)
    for a, b in ((seeded, one_seed), (one_seed, seeded)):
        assert is_empty(figure_seed_spread(a, b), UNKNOWN), (a, b)
    assert is_empty(figure_seed_spread(no_measure, no_measure), NO_SEEDS)  # nothing measured to compare
