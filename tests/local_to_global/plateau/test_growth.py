"""The instability seen growing: the growth fit recovers a known exponential rate, gives a rate near 0
to a drift at constant speed, stops before the loss moves; the projections are those of the
checkpoints' displacement on the given directions; a growth run is the seed's own run with dense
checkpoints."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from replication.papers.local_to_global.plateau.growth import fitted_rate, grown, growth_run, projections
from replication.papers.local_to_global.plateau.hessian import FlatParameters
from replication.papers.local_to_global.plateau.spectrum import canonical_basis
from replication.papers.local_to_global.transformer.train import train


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
    fitted, used = fitted_rate(frame(3.0, fall_at=5))  # the fewest it fits: 4 after the point
    assert used == 4 and fitted == pytest.approx(3.0, rel=1e-3)


def test_the_plateau_is_measured_from_the_point_and_skips_checkpoints_without_a_loss():
    """A spike of the loss just after the point does not end the plateau early (the fall is measured
    from the point's loss), and checkpoints where no test loss was taken (NaN) do not end it either."""
    spiked = frame(3.0, fall_at=40)
    spiked.loc[1, "test_loss"] = 0.75
    assert fitted_rate(spiked)[1] == 39
    unevaluated = frame(3.0, fall_at=40)
    unevaluated.loc[[10, 25], "test_loss"] = np.nan
    fitted, used = fitted_rate(unevaluated)
    assert used == 39 and fitted == pytest.approx(3.0, rel=1e-3)


@pytest.mark.parametrize("slope", [1e-3, 1e3])
def test_a_steep_growth_is_found_at_any_scale(slope):
    """30 e-folds over the plateau, of a small or a large projection: the fit starts from the data's own
    slope, not from a fixed guess."""
    fitted, _ = fitted_rate(frame(50.0, slope=slope))
    assert fitted == pytest.approx(50.0, rel=1e-3)
    fitted, used = fitted_rate(frame(50.0, slope=slope, steps=5))  # as steep over the fewest checkpoints
    assert used == 4 and fitted == pytest.approx(50.0, rel=1e-3)


def test_grown_is_the_exponential_from_the_point_with_its_initial_slope():
    assert grown(1.0, 2.0, np.log(2.0)) == pytest.approx(2.0 / np.log(2.0))  # 2 (e^(ln 2) - 1) / ln 2
    assert grown([0.0, 0.5], 3.0, 4.0).tolist() == pytest.approx([0.0, 3.0 * (np.e**2 - 1) / 4.0])
    assert grown(0.2, 3.0, 1e-12) == pytest.approx(0.6)  # the linear drift as the rate goes to 0
    linear = grown(range(3), 2, 0.0)  # iterations as spent learning rate: still a float projection
    assert linear.dtype == np.float64 and linear.tolist() == [0.0, 2.0, 4.0]


def test_projections_are_the_displacement_on_each_direction():
    class Result:
        pass

    rng = np.random.default_rng(0)
    names = {"e": (3,), "p": (4, 3), "W_1": (2, 3), "W_2": (3, 2), "b": (1,)}
    checkpoints = {name: rng.standard_normal((3, *shape)) for name, shape in names.items()}
    checkpoints["step"] = np.array([300, 310, 320])
    result = Result()
    result.checkpoints = checkpoints
    result.losses = pd.DataFrame({"step": [300, 320], "test_loss": [0.6, 0.5]})  # none taken at 310
    order = ["e", "p", "W_1", "W_2", "b"]  # FlatParameters' order (hessian.BLOCKS)
    flat = lambda k: np.concatenate([checkpoints[n][k].reshape(-1) for n in order])  # noqa: E731
    direction = rng.standard_normal(flat(0).size)
    direction /= np.linalg.norm(direction)
    rates = np.r_[np.nan, np.full(400, 1e-3)]
    table = projections(result, {"mode": direction}, rates)
    assert table.projection_mode.tolist() == pytest.approx([(flat(k) - flat(0)) @ direction for k in range(3)])
    assert table.spent.tolist() == pytest.approx([0.0, 0.01, 0.02])
    assert table.norm.tolist() == pytest.approx([np.linalg.norm(flat(k) - flat(0)) for k in range(3)])
    assert table.step.tolist() == [300, 310, 320]
    assert table.test_loss.tolist()[::2] == [0.6, 0.5] and np.isnan(table.test_loss[1])
    # the canonical part: the least-squares projection on the canonical directions at the first checkpoint
    basis = canonical_basis(FlatParameters.of({name: checkpoints[name][0] for name in order}))
    canonical = [basis @ np.linalg.lstsq(basis, flat(k) - flat(0), rcond=None)[0] for k in range(3)]
    assert table.canonical_norm.tolist() == pytest.approx([np.linalg.norm(part) for part in canonical])


def test_a_growth_run_is_the_seeds_standard_run_with_checkpoints_every_few_steps(tiny_run_settings, capsys):
    result = growth_run(tiny_run_settings, seed=3, start=4, stop=12, every=4)
    assert result.checkpoints["step"].tolist() == [4, 8, 12]
    losses = result.losses.set_index("step")
    assert losses.index.max() == 12
    assert losses.test_loss.notna().to_numpy().nonzero()[0].tolist() == [0, 4, 8, 12]  # evaluated every 4
    same = dataclasses.replace(tiny_run_settings, steps=12, checkpoints=(8,), eval_every=4)
    reference = train(same, "standard", 3, progress=False)
    for name, value in reference.checkpoints.items():
        if name != "step":
            assert np.array_equal(result.checkpoints[name][1], value[0]), name
    assert capsys.readouterr().err == ""  # no progress bar
