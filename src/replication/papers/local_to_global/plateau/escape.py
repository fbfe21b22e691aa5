"""What decides the escape from the plateau: the standard-init runs of a few cells trained again
with the init's scale sigma or the batch size changed, and the two tests they allow.

A linear instability (a saddle) of rate |lambda| grows from the init's scale sigma in a time
proportional to log(1/sigma) / |lambda|: its escape grows with log(1/sigma) and does not depend on
the gradient's noise. An escape driven by the noise of the batches slows when the batch grows (at
the same schedule, the noise of a step falls like 1 / sqrt(batch)). Per seed: the least-squares
slope of the escape iteration against log(1/sigma) over the sigma values where it escaped, and the
escape at the largest batch over the one at the smallest; per cell, the one verdict rule over the
seeds where each can be told (``replication.claims.cell_holds``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import cell_holds

from ..phase.grid import Cell
from ..phase.measures import CellOutputs
from ..phase.settings import PhaseSettings
from ..phase.tables import measure_runs
from ..transformer.settings import RunSettings
from .settings import INIT

# Per run of escape.csv; cpu_s and wall_s are the only columns whose bytes change between reruns.
COLUMNS = [
    "p",
    "q",
    "sweep",
    "value",
    "sigma",
    "batch_size",
    "seed",
    "escaped",
    "escape",
    "drop_end",
    "plateau_length",
    "steps_run",
    "horizon",
    "stopped_early",
    "cpu_s",
    "wall_s",
]
SADDLE, NOISE, NEITHER, NOT_CHECKABLE = "saddle", "noise", "neither", "not checkable"
EXPLANATIONS = (SADDLE, NOISE, NEITHER, NOT_CHECKABLE)


def _job_rows(runs: pd.DataFrame, costs: pd.DataFrame, settings: RunSettings, sweep: str) -> pd.DataFrame:
    """escape.csv's rows of one job: its runs' measures (``runs``), their costs (init, seed, horizon,
    cpu_s, wall_s) and the job's sweep, value, sigma and batch size."""
    costs = costs[["init", "seed", "horizon", "cpu_s", "wall_s"]]
    frame = runs.merge(costs, on=["init", "seed"], validate="one_to_one")
    frame["sweep"], frame["value"] = sweep, getattr(settings, sweep)
    frame["sigma"], frame["batch_size"] = settings.sigma, settings.batch_size
    return frame[COLUMNS]


def sweep_runs(settings: RunSettings, sweep: str, outputs: CellOutputs, phase: PhaseSettings) -> pd.DataFrame:
    """One row per seed of one escape job (``settings``: its runs', ``outputs``: what
    ``phase.training.train_cell`` made of them), measured as the phase grid measures its runs
    (``phase.tables.measure_runs``), with the job's sweep, value, sigma and batch size and each run's
    CPU and wall seconds from the kernel."""
    return _job_rows(measure_runs({Cell(settings.chain): outputs}, phase), outputs.runs, settings, sweep)


def phase_grid_runs(
    settings: RunSettings, sweep: str, measures: pd.DataFrame, costs: pd.DataFrame, seeds
) -> pd.DataFrame:
    """The rows of an escape job whose runs are the phase grid's (``plateau.settings.from_phase_grid``): the
    grid's measures of the cell's standard-init runs at ``seeds`` (``measures``: measures.csv) with
    their costs (``costs``: the cell's runs.csv). Their steps and CPU are those of the grid's runs,
    which go on to the entropy rate."""
    chain = settings.chain
    runs = measures[np.isclose(measures.p, chain.p) & np.isclose(measures.q, chain.q) & (measures.init == INIT)]
    runs = runs[runs.seed.isin(seeds)].sort_values("seed")
    if sorted(runs.seed) != sorted(seeds):
        missing = sorted(set(seeds) - set(runs.seed))
        raise ValueError(f"the phase grid has no {INIT}-init runs of seeds {missing} at {chain}")
    return _job_rows(runs, costs, settings, sweep).reset_index(drop=True)


def escape_or_horizon(runs: pd.DataFrame) -> pd.Series:
    """Each run's escape iteration; a run that never escaped counts as its horizon (a lower bound)."""
    return runs.escape.where(runs.escaped.astype(bool), runs.horizon).astype(float)


def median_escape(runs: pd.DataFrame) -> tuple[float, bool]:
    """The median escape over ``runs`` (never escaped: the horizon) and whether it is only a lower
    bound: the runs that never escaped sit at the top, so the median is exact unless they are at
    least half of them."""
    censored = int((~runs.escaped.astype(bool)).sum())
    return float(escape_or_horizon(runs).median()), censored >= len(runs) - len(runs) // 2


def sigma_slope(runs: pd.DataFrame) -> float:
    """One seed's slope of the escape iteration against log(1/sigma), least squares over the sigma
    values where it escaped (``runs``: that seed's rows of the sigma sweep); NaN below 2 values.
    Computed about the means, so that equal escapes give a slope of exactly 0, not a rounding error
    of either sign."""
    escaped = runs[runs.escaped.astype(bool)]
    if escaped.value.nunique() < 2:
        return np.nan
    x = np.log(1 / escaped.value.to_numpy(float))
    y = escaped.escape.to_numpy(float)
    x, y = x - x.mean(), y - y.mean()
    return float(np.sum(x * y) / np.sum(x * x))


def batch_ratio(runs: pd.DataFrame) -> tuple[float, bool]:
    """One seed's escape at the largest batch over the one at the smallest (``runs``: that seed's
    rows of the batch sweep), and whether it is only a lower bound: a largest batch that never
    escaped counts as its horizon. NaN where the smallest batch never escaped (or escaped at 0)."""
    ordered = runs.sort_values("value")
    smallest, largest = ordered.iloc[0], ordered.iloc[-1]
    if not bool(smallest.escaped) or float(smallest.escape) <= 0:
        return np.nan, False
    return float(escape_or_horizon(ordered.iloc[[-1]]).iloc[0] / float(smallest.escape)), not bool(largest.escaped)


def batch_free(ratio: float, bound: bool, factor: float) -> float:
    """1.0 where the ratio is <= ``factor`` (the escape does not depend on the batch), 0.0 where it
    is above, NaN where it cannot be told: no ratio, or a lower bound that is still <= ``factor``."""
    if not np.isfinite(ratio) or (bound and ratio <= factor):
        return np.nan
    return float(ratio <= factor)


def seed_tests(escape: pd.DataFrame, factor: float) -> pd.DataFrame:
    """One row per (cell, seed): the sigma slope and whether it is > 0 (``grows``; NaN: not
    checkable), the batch ratio, whether it is a lower bound, and whether it is <= ``factor`` (``batch_free``)."""
    rows = []
    for (p, q, seed), runs in escape.groupby(["p", "q", "seed"], sort=False):
        slope = sigma_slope(runs[runs.sweep == "sigma"])
        ratio, bound = batch_ratio(runs[runs.sweep == "batch_size"])
        rows.append(
            {
                "p": p,
                "q": q,
                "seed": int(seed),
                "slope": slope,
                "grows": float(slope > 0) if np.isfinite(slope) else np.nan,
                "ratio": ratio,
                "ratio_bound": bound,
                "batch_free": batch_free(ratio, bound, factor),
            }
        )
    return pd.DataFrame(rows)


def verdict(outcomes: pd.Series) -> bool | None:
    """A cell's verdict over the seeds where the test could be told (1.0 / 0.0; NaN elsewhere) by the
    one verdict rule; None where no seed could."""
    told = outcomes.dropna()
    return cell_holds(float(told.mean())) if len(told) else None


def explanation(grows: bool | None, free: bool | None) -> str:
    """What a cell's two verdicts support: ``noise`` where a bigger batch slows the escape (5b
    fails), ``saddle`` where the escape grows with log(1/sigma) and is batch-independent, ``neither``
    where it is batch-independent but does not grow, ``not checkable`` otherwise."""
    if free is False:
        return NOISE
    if free and grows:
        return SADDLE
    if free and grows is False:
        return NEITHER
    return NOT_CHECKABLE


def cell_tests(escape: pd.DataFrame, factor: float) -> pd.DataFrame:
    """One row per cell: seeds, how many could be told and hold for each test, both verdicts (None:
    not checkable) and the explanation they support."""
    seeds = seed_tests(escape, factor)
    rows = []
    for (p, q), group in seeds.groupby(["p", "q"], sort=False):
        grows, free = verdict(group.grows), verdict(group.batch_free)
        rows.append(
            {
                "p": p,
                "q": q,
                "seeds": len(group),
                "grows_told": int(group.grows.notna().sum()),
                "grows_hold": int((group.grows == 1).sum()),
                "grows": grows,
                "batch_told": int(group.batch_free.notna().sum()),
                "batch_hold": int((group.batch_free == 1).sum()),
                "batch_free": free,
                "explanation": explanation(grows, free),
            }
        )
    return pd.DataFrame(rows)
