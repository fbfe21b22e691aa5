"""Points on the plateau: the phase grid's standard-init runs trained again to chosen iterations.

A run is a function of its seed and settings alone (train.py), and the phase grid's stopping rule
only watches it, so training the same run without the rule, for as many steps as its last point
needs and with the same schedule (the horizon's), gives the phase run's parameters at those steps.
That costs at most what the run's plateau cost; keeping every run's parameters in the phase jobs
instead would tie the cell jobs to this analysis.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..transformer.settings import RunSettings
from ..transformer.train import train
from .settings import INIT, PlateauSettings


def plateau_points(measures: pd.DataFrame, plateau: PlateauSettings) -> pd.DataFrame:
    """One row per (seed, point) of one cell's standard-init runs (``measures``: the phase measures
    of that cell) where the run is on its plateau (after the initial drop, before the escape): the
    iteration, its kind (``fixed`` or ``mid``), the run's drop end and escape."""
    rows = []
    for run in measures[measures.init == INIT].itertuples():
        points = [(int(step), "fixed") for step in plateau.points]
        if plateau.mid_plateau and run.escaped:
            points.append((int(round((run.drop_end + run.escape) / 2)), "mid"))
        for step, kind in points:
            escaped_by = bool(run.escaped) and step >= run.escape
            rows.append(
                {
                    "seed": int(run.seed),
                    "step": step,
                    "kind": kind,
                    "drop_end": int(run.drop_end),
                    "escape": float(run.escape),
                    "on_plateau": bool(step >= run.drop_end and not escaped_by),
                }
            )
    frame = pd.DataFrame(rows, columns=["seed", "step", "kind", "drop_end", "escape", "on_plateau"])
    # as bool: an empty object column would select columns, not rows, and drop them all
    return frame[frame.on_plateau.astype(bool)].reset_index(drop=True)


def train_to_points(settings: RunSettings, points: pd.DataFrame, progress: bool = True) -> dict[str, np.ndarray]:
    """Every seed of ``points`` trained to its last point; the parameters at each of its points, as
    ``seed<seed>/step<step>/<parameter>``. ``settings``: the phase run's (its horizon's schedule)."""
    arrays = {}
    for seed, group in points.groupby("seed", sort=False):
        steps = tuple(sorted(set(group.step.astype(int))))
        run = dataclasses.replace(settings, steps=steps[-1], checkpoints=steps, eval_every=steps[-1])
        result = train(run, INIT, int(seed), name=f"plateau/seed{seed}", progress=progress, optimizer_state=True)
        for index, step in enumerate(result.checkpoints["step"]):
            for name, values in result.checkpoints.items():
                if name != "step":
                    arrays[f"seed{seed}/step{int(step)}/{name}"] = values[index]
    return arrays


def point_parameters(arrays: dict[str, np.ndarray], seed: int, step: int) -> dict[str, np.ndarray]:
    prefix = f"seed{seed}/step{step}/"
    return {key.removeprefix(prefix): value for key, value in arrays.items() if key.startswith(prefix)}
