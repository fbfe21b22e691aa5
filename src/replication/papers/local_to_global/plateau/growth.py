"""The instability seen growing: a run's parameters through its plateau, projected on the unstable
mode AdamW's view finds at the fixed point (``adamw.py``), on the loss' bottom eigenvector and on the
canonical directions.

If the linear picture holds, the projection of theta_t - theta_point on the mode's direction grows
like e^(rate S_t) - 1, S_t = sum_{point < s <= t} eta_s the learning rate spent since the point and
rate = |mu| - wd_v, long before the loss moves: the plateau's hidden progress. ``fitted_rate`` fits
that curve (``grown``) by least squares over the plateau until the loss moves; a drift at constant
speed, which AdamW's normalised step gives once the mode's gradient outgrows the batches' noise,
fits it with a rate near 0.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..transformer.settings import RunSettings
from .settings import INIT

if TYPE_CHECKING:
    from .hessian import FlatParameters

DIRECTIONS = ("mode", "bottom")


def growth_run(settings: RunSettings, seed: int, start: int, stop: int, every: int):
    """The run of ``seed`` trained again to ``stop`` with checkpoints every ``every`` iterations from
    ``start``: its losses and checkpoints (``train``)."""
    # Training and projecting import torch where they run: the figure jobs read only the fits below.
    from ..transformer.train import train

    steps = tuple(range(start, stop + 1, every))
    run = dataclasses.replace(settings, steps=stop, checkpoints=steps, eval_every=every)
    return train(run, INIT, seed, name=f"growth/seed{seed}", progress=False)


def projections(result, directions: dict[str, np.ndarray], rates: np.ndarray) -> pd.DataFrame:
    """Per checkpoint: the learning rate spent since the first (S), the test loss there, and the
    projection of theta_t - theta_first on each of ``directions`` (unit vectors in FlatParameters
    order) and its norm in the canonical directions at the first checkpoint."""
    from .hessian import FlatParameters
    from .spectrum import canonical_basis

    steps = result.checkpoints["step"].astype(int)
    names = [name for name in result.checkpoints if name != "step"]

    def flat_at(index: int) -> FlatParameters:
        return FlatParameters.of({name: result.checkpoints[name][index] for name in names})

    origin = flat_at(0)
    basis = canonical_basis(origin)
    losses = result.losses.set_index("step").test_loss
    spent = np.cumsum(np.nan_to_num(rates))
    rows = []
    for index, step in enumerate(steps):
        delta = (flat_at(index).vector - origin.vector).numpy()
        rows.append(
            {
                "step": int(step),
                "spent": float(spent[step] - spent[steps[0]]),
                "test_loss": float(losses.get(step, np.nan)),
                **{f"projection_{name}": float(delta @ direction) for name, direction in directions.items()},
                "canonical_norm": float(np.linalg.norm(basis.T @ delta)),
                "norm": float(np.linalg.norm(delta)),
            }
        )
    return pd.DataFrame(rows)


def grown(spent, slope: float, rate: float):
    """The projection of a mode growing at ``rate`` per unit of learning rate from the point, with
    initial slope ``slope``: slope (e^(rate S) - 1) / rate, which is slope x S as the rate goes to 0."""
    spent = np.asarray(spent, dtype=float)
    if abs(rate) < 1e-9:
        return slope * spent
    return slope * np.expm1(rate * spent) / rate


def fitted_rate(frame: pd.DataFrame, column: str = "projection_mode") -> tuple[float, int]:
    """The growth rate per unit of learning rate of ``column``: the least-squares fit of
    ``grown`` (an exponential from the point, which a linear drift fits with rate 0) over the
    checkpoints after the point up to the last before the test loss has fallen by a tenth of its
    range over the frame (before the escape moves the loss). NaN with fewer than 4 checkpoints."""
    from scipy.optimize import curve_fit

    loss = frame.test_loss.to_numpy()
    moved = loss[0] - 0.1 * (np.nanmax(loss) - np.nanmin(loss))
    flat = np.minimum.accumulate(np.nan_to_num(loss, nan=np.inf)) >= moved
    chosen = np.flatnonzero(flat & (frame.step > frame.step.min()).to_numpy())
    if len(chosen) < 4:
        return float("nan"), len(chosen)
    spent, size = frame.spent.to_numpy()[chosen], frame[column].to_numpy()[chosen]
    size = size * np.sign(size[-1])  # the mode's sign is arbitrary
    start = (size[-1] / spent[-1], 1.0)
    (_, rate), _ = curve_fit(lambda s, b, k: grown(s, b, k), spent, size, p0=start, maxfev=20000)
    return float(rate), len(chosen)


__all__ = ["DIRECTIONS", "fitted_rate", "grown", "growth_run", "projections"]
