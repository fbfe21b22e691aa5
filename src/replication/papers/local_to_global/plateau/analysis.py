"""Tables of the plateau analysis: one row per (cell, seed, point) with its spectrum and the run's
plateau from the phase measures, one row per (cell, point kind) over seeds, and the saddle law
fitted on half the cells and checked on the other half."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .hessian import BLOCKS

SADDLE, MINIMUM, UNRESOLVED = "saddle", "minimum within noise", "unresolved"
# Per restriction: the prefix of its spectrum's columns and its lowest eigenvalue on the fitted batches.
LOWEST = {"": "lambda_1", "canonical_": "canonical_lambda_min"}


def point_label(row) -> str:
    """``iteration 300`` for a fixed point, ``mid-plateau`` for a run's own midpoint."""
    return "mid-plateau" if row.kind == "mid" else f"iteration {int(row.step)}"


def point_verdicts(spectra: pd.DataFrame, significance: float, prefix: str = "") -> np.ndarray:
    """Per point, for the full model (``prefix`` "") or the canonical restriction ("canonical_"):

    - ``saddle`` where the curvature along the lowest eigenvector on the held-out batches is below
      -``significance`` x its standard error (the spectrum's ``saddle``): a negative direction of the
      loss itself;
    - ``minimum within noise`` where, besides, the lowest eigenvalue on the fitted batches is not below
      -``significance`` x its spread there: the lowest eigenvalue is concave in the matrix, so on
      average the fitted batches' is at most the loss's; with none negative on them, the loss has
      none within the noise;
    - ``unresolved`` otherwise: the fitted batches have a negative direction that the held-out ones
      do not confirm, so the batches' noise hides whether the loss has one.
    """
    saddle = spectra[f"{prefix}saddle"].astype(bool).to_numpy()
    fitted = (spectra[LOWEST[prefix]] < -significance * spectra[f"{prefix}noise"]).to_numpy()
    return np.select([saddle, ~fitted], [SADDLE, MINIMUM], UNRESOLVED)


def join_runs(spectra: pd.DataFrame, measures: pd.DataFrame, significance: float) -> pd.DataFrame:
    """The spectra with each run's plateau length and escape (phase measures, standard init) and
    each point's verdict, full model and canonical restriction (``point_verdicts``)."""
    runs = measures[measures.init == "standard"][["p", "q", "seed", "plateau_length", "censored"]]
    frame = spectra.merge(runs, on=["p", "q", "seed"], how="left", validate="many_to_one")
    frame["point"] = [point_label(row) for row in frame.itertuples()]
    for prefix in LOWEST:
        frame[f"{prefix}verdict"] = point_verdicts(frame, significance, prefix)
    return frame


def seed_outcomes(points: pd.DataFrame, prefix: str = "") -> pd.Series:
    """Per point, whether it is a local minimum: 1.0 (minimum within noise), 0.0 (saddle), NaN (unresolved)."""
    verdict = points[f"{prefix}verdict"]
    return verdict.map({MINIMUM: 1.0, SADDLE: 0.0, UNRESOLVED: np.nan}).astype(float)


def summarise(points: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, point) over the seeds on the plateau there: median lambda_min and its
    spread on the fitted batches, the median held-out curvature along its eigenvector and that
    curvature's noise, the canonical restriction's, the seeds that are saddles and minima (the rest
    unresolved: ``point_verdicts``), and the median block weights."""
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
                "saddles": int((group.verdict == SADDLE).sum()),
                "minima": int((group.verdict == MINIMUM).sum()),
                "canonical_lambda_min": float(group.canonical_lambda_min.median()),
                "canonical_noise": float(group.canonical_noise.median()),
                "canonical_curvature": float(group.canonical_curvature.median()),
                "canonical_curvature_noise": float(group.canonical_curvature_noise.median()),
                "canonical_saddles": int((group.canonical_verdict == SADDLE).sum()),
                "canonical_minima": int((group.canonical_verdict == MINIMUM).sum()),
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
