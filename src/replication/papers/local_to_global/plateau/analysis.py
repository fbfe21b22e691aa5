"""Tables of the plateau analysis: one row per (cell, seed, point) with its spectrum and the run's
plateau from the phase measures, one row per (cell, point kind) over seeds, and the saddle law
fitted on half the cells and checked on the other half."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .hessian import BLOCKS

SADDLE, MINIMUM = "saddle", "minimum within noise"


def point_label(row) -> str:
    """``iteration 300`` for a fixed point, ``mid-plateau`` for a run's own midpoint."""
    return "mid-plateau" if row.kind == "mid" else f"iteration {int(row.step)}"


def join_runs(spectra: pd.DataFrame, measures: pd.DataFrame) -> pd.DataFrame:
    """The spectra with each run's plateau length and escape (phase measures, standard init)."""
    runs = measures[measures.init == "standard"][["p", "q", "seed", "plateau_length", "censored"]]
    frame = spectra.merge(runs, on=["p", "q", "seed"], how="left", validate="many_to_one")
    frame["point"] = [point_label(row) for row in frame.itertuples()]
    frame["verdict"] = np.where(frame.saddle, SADDLE, MINIMUM)
    return frame


def summarise(points: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, point) over the seeds on the plateau there: median lambda_min and its
    spread on the fitted batches, the median held-out curvature along its eigenvector and that
    curvature's noise (the verdict's), the canonical restriction's, the saddles, and the median
    block weights."""
    rows = []
    on = points[points.on_plateau]
    for (p, q, point), group in on.groupby(["p", "q", "point"], sort=False):
        rows.append(
            {
                "p": p,
                "q": q,
                "point": point,
                "seeds": len(group),
                "lambda_min": float(group.lambda_1.median()),
                "noise": float(group.noise.median()),
                "curvature": float(group.curvature.median()),
                "curvature_noise": float(group.curvature_noise.median()),
                "saddles": int(group.saddle.sum()),
                "canonical_lambda_min": float(group.canonical_lambda_min.median()),
                "canonical_noise": float(group.canonical_noise.median()),
                "canonical_curvature": float(group.canonical_curvature.median()),
                "canonical_curvature_noise": float(group.canonical_curvature_noise.median()),
                "canonical_saddles": int(group.canonical_saddle.sum()),
                "canonical_weight": float(group.canonical_weight.median()),
                "gradient_norm": float(group.gradient_norm.median()),
                "median_plateau": float(group.plateau_length.median()),
                **{f"weight_{b}": float(group[f"weight_{b}"].median()) for b in BLOCKS},
            }
        )
    return pd.DataFrame(rows)


def saddle_law(points: pd.DataFrame, sigma: float, point: str) -> tuple[pd.DataFrame, dict]:
    """Plateau length against the saddle law's clock log(1/sigma) / |curvature| (the held-out
    curvature along the bottom eigenvector: the rate of the negative direction, free of the fitted
    batches' bias) over the runs that escaped from a saddle at ``point``: the constant of
    proportionality fitted (geometric mean of the ratios) on every other cell, in grid order, and
    checked on the rest.

    Returns one row per run (clock, plateau, half, prediction) and the fit: the constant, the rank
    correlation over the held-out runs, and the largest factor between prediction and measurement there.
    """
    frame = points[(points.point == point) & points.on_plateau & points.saddle & ~points.censored.astype(bool)]
    frame = frame.copy()
    frame["clock"] = np.log(1 / sigma) / np.abs(frame.curvature)
    cells = list(dict.fromkeys(zip(frame.p, frame.q)))
    fit_cells = set(cells[::2])
    frame["half"] = ["fit" if (p, q) in fit_cells else "check" for p, q in zip(frame.p, frame.q)]
    fit, check = frame[frame.half == "fit"], frame[frame.half == "check"]
    summary = {"point": point, "runs_fit": len(fit), "runs_check": len(check)}
    if len(fit) == 0 or len(check) < 3:
        frame["prediction"] = np.nan
        return frame, {**summary, "constant": np.nan, "rank_correlation": np.nan, "max_factor": np.nan}
    constant = float(np.exp(np.mean(np.log(fit.plateau_length / fit.clock))))
    frame["prediction"] = constant * frame.clock
    held = frame[frame.half == "check"]
    factor = np.exp(np.abs(np.log(held.prediction / held.plateau_length)))
    return frame, {
        **summary,
        "constant": constant,
        "rank_correlation": float(spearmanr(held.clock, held.plateau_length).statistic),
        "max_factor": float(factor.max()),
        "median_factor": float(np.median(factor)),
    }
