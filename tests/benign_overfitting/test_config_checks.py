"""The grid-axis check that the schema cannot state: start <= stop, per axis, with one clear message."""

import pytest

from replication.errors import ConfigError
from replication.papers.benign_overfitting.config_checks import check_ranges


def grid_config(**axes) -> dict:
    return {"benign_overfitting": {"grid": axes}}


@pytest.mark.parametrize("key", ["dims", "signal_norms"])
def test_a_backwards_axis_names_its_key_and_values(key):
    other = "signal_norms" if key == "dims" else "dims"
    config = grid_config(**{key: {"start": 10, "stop": 5, "step": 1}, other: {"start": 1, "stop": 2, "step": 1}})
    with pytest.raises(ConfigError) as error:
        check_ranges(config)
    assert str(error.value) == (
        f"config key 'benign_overfitting.grid.{key}': stop 5 < start 10; allowed: start <= stop"
    )


def test_forward_and_single_value_axes_pass():
    check_ranges(
        grid_config(dims={"start": 250, "stop": 250, "step": 250}, signal_norms={"start": 5, "stop": 100, "step": 5})
    )
    check_ranges(grid_config(dims={"start": 250, "stop": 5000, "step": 250}))  # the other axis not given
    check_ranges({"benign_overfitting": {}})
    check_ranges({})
