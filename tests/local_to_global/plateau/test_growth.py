"""The instability seen growing: the growth fit recovers a known exponential rate, gives a rate near 0
to a drift at constant speed, stops before the loss moves; the projections are those of the
checkpoints' displacement on the given directions."""

import numpy as np
import pandas as pd
import pytest

from replication.papers.local_to_global.plateau.growth import fitted_rate, grown, projections


def frame(rate: float, slope: float = 0.5, steps: int = 60, fall_at: int | None = None) -> pd.DataFrame:
    spent = np.linspace(0, 0.6, steps)
    loss = np.full(steps, 0.67)
    if fall_at is not None:
        loss[fall_at:] = 0.60  # the escape: the loss falls; what follows is not the plateau's growth
    projection = grown(spent, slope, rate)
    if fall_at is not None:
        projection[fall_at:] = projection[fall_at - 1] + 50 * (spent[fall_at:] - spent[fall_at - 1])
    return pd.DataFrame(
        {"step": np.arange(steps) * 10, "spent": spent, "test_loss": loss, "projection_mode": projection}
    )


@pytest.mark.parametrize("rate", [2.0, 5.0, 8.0])
def test_an_exponential_growth_gives_its_rate(rate):
    fitted, used = fitted_rate(frame(rate))
    assert fitted == pytest.approx(rate, rel=1e-3) and used == 59


def test_a_drift_at_constant_speed_gives_a_rate_near_zero():
    fitted, _ = fitted_rate(frame(0.0))
    assert abs(fitted) < 1e-3


def test_the_fit_stops_before_the_loss_moves():
    fitted, used = fitted_rate(frame(3.0, fall_at=40))
    assert used == 39 and fitted == pytest.approx(3.0, rel=1e-3)
    assert np.isnan(fitted_rate(frame(3.0, fall_at=3))[0])  # too few checkpoints on the plateau


def test_projections_are_the_displacement_on_each_direction():
    class Result:
        pass

    rng = np.random.default_rng(0)
    names = {"e": (3,), "p": (4, 3), "W_1": (2, 3), "W_2": (3, 2), "b": (1,)}
    checkpoints = {name: rng.standard_normal((3, *shape)) for name, shape in names.items()}
    checkpoints["step"] = np.array([300, 310, 320])
    result = Result()
    result.checkpoints = checkpoints
    result.losses = pd.DataFrame({"step": [300, 310, 320], "test_loss": [0.6, 0.6, 0.5]})
    order = ["e", "p", "W_1", "W_2", "b"]  # FlatParameters' order (hessian.BLOCKS)
    flat = lambda k: np.concatenate([checkpoints[n][k].reshape(-1) for n in order])  # noqa: E731
    direction = rng.standard_normal(flat(0).size)
    direction /= np.linalg.norm(direction)
    rates = np.r_[np.nan, np.full(400, 1e-3)]
    table = projections(result, {"mode": direction}, rates)
    assert table.projection_mode.tolist() == pytest.approx([(flat(k) - flat(0)) @ direction for k in range(3)])
    assert table.spent.tolist() == pytest.approx([0.0, 0.01, 0.02])
    assert table.norm.tolist() == pytest.approx([np.linalg.norm(flat(k) - flat(0)) for k in range(3)])
