"""The instability seen growing: a run's parameters through its plateau, projected on the unstable
mode AdamW's view finds at the fixed point (``adamw.py``), on the loss' bottom eigenvector and on the
canonical directions.

If the linear picture holds, the projection of theta_t - theta_point on the mode's direction grows
like exp(rate x S_t), S_t = sum_{point < s <= t} eta_s the learning rate spent since the point and
rate = |mu| - wd_v, long before the loss moves: the plateau's hidden progress. ``fitted_rate`` fits
log |projection| against S_t by least squares over the part of the plateau where the projection has
outgrown the noise and the loss has not yet moved.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..transformer.settings import RunSettings
from ..transformer.train import train
from .hessian import FlatParameters
from .settings import INIT
from .spectrum import canonical_basis

DIRECTIONS = ("mode", "bottom")


def growth_run(settings: RunSettings, seed: int, start: int, stop: int, every: int):
    """The run of ``seed`` trained again to ``stop`` with checkpoints every ``every`` iterations from
    ``start``: its losses and checkpoints (``train``)."""
    steps = tuple(range(start, stop + 1, every))
    run = dataclasses.replace(settings, steps=stop, checkpoints=steps, eval_every=every)
    return train(run, INIT, seed, name=f"growth/seed{seed}", progress=False)


def projections(result, directions: dict[str, np.ndarray], rates: np.ndarray) -> pd.DataFrame:
    """Per checkpoint: the learning rate spent since the first (S), the test loss there, and the
    projection of theta_t - theta_first on each of ``directions`` (unit vectors in FlatParameters
    order) and its norm in the canonical directions at the first checkpoint."""
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


def fitted_rate(frame: pd.DataFrame, column: str = "projection_mode") -> tuple[float, int]:
    """The growth rate per unit of learning rate of |``column``|: least squares of its log against
    the learning rate spent, over the checkpoints from the first where it exceeds 3 times its value at
    the first step after the point (out of the noise) to the last before the test loss has fallen by
    a tenth of its range over the frame (before the escape moves the loss). NaN with fewer than 3."""
    size = frame[column].abs().to_numpy()
    loss = frame.test_loss.to_numpy()
    floor = size[1] if len(size) > 1 else np.nan
    moved = loss[0] - 0.1 * (np.nanmax(loss) - np.nanmin(loss))
    window = (size > 3 * floor) & (np.minimum.accumulate(np.nan_to_num(loss, nan=np.inf)) > moved)
    chosen = np.flatnonzero(window)
    if len(chosen) < 3:
        return float("nan"), len(chosen)
    slope = np.polyfit(frame.spent.to_numpy()[chosen], np.log(size[chosen]), 1)[0]
    return float(slope), len(chosen)


__all__ = ["DIRECTIONS", "fitted_rate", "growth_run", "projections"]
