"""Tables of the plateau analysis: one row per (cell, seed, point) with its spectrum, verdicts and the
run's plateau from the phase measures, one row per (cell, point kind) over seeds, and the escape
predicted from AdamW's linearised step (``adamw.py``) against the measured one: per escaping run
its escape iteration, per sweep cell and seed the slope of the escape against log(1/sigma)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .adamw import predicted_escape, predicted_slope
from .escape import sigma_slope
from .settings import BLOCKS
from .verdict import MINIMUM, SADDLE, UNRESOLVED

# The directions judged at a point: the prefix of their columns and what they are.
JUDGED = {"": "full model", "canonical_": "canonical directions", "mode_": "AdamW's preconditioned Hessian"}
SLOPE_FACTOR, ESCAPE_FACTOR = 1.5, 2.0  # the law holds within these factors (claims 5s, 5t)
STATIONARY = 3.0  # a point whose mean gradient is within this many noise norms counts as near-stationary
# Which assumption of the linearised step the data say broke, per escaping run (``assumption``), in
# the order they are tested: the first that applies names the run.
ASSUMPTIONS = {
    "holds": "the prediction is within the factor",
    "stable mode": "no unstable mode at the point (held-out mu >= wd_v): the escape is not its instability",
    "not stationary": f"the point still slides (mean gradient above {STATIONARY:g} x its noise)",
    "not an eigenvector": (
        f"the mode's fitted and held-out curvature differ by more than a factor {ESCAPE_FACTOR:g}: the fitted "
        "direction is not an eigenvector of the population's preconditioned Hessian"
    ),
    "slower than linear": "the mode grows slower than the linearised step (it escapes later than predicted)",
    "faster than linear": "the run escapes before the mode could grow (something faster than the instability)",
}


def point_label(row) -> str:
    """``iteration 300`` for a fixed point, ``mid-plateau`` for a run's own midpoint."""
    return "mid-plateau" if row.kind == "mid" else f"iteration {int(row.step)}"


def judged(points: pd.DataFrame) -> list[str]:
    """The prefixes of the directions judged in ``points`` (the mode only where it was measured)."""
    return [prefix for prefix in JUDGED if f"{prefix}verdict" in points]


def join_runs(spectra: pd.DataFrame, measures: pd.DataFrame) -> pd.DataFrame:
    """The spectra with each run's plateau length, escape and horizon (phase measures, standard init)."""
    runs = measures[measures.init == "standard"][["p", "q", "seed", "plateau_length", "censored"]]
    frame = spectra.merge(runs, on=["p", "q", "seed"], how="left", validate="many_to_one")
    frame["point"] = [point_label(row) for row in frame.itertuples()]
    return frame


def seed_outcomes(points: pd.DataFrame, prefix: str = "") -> pd.Series:
    """Per point, whether it is a local minimum: 1.0 (minimum), 0.0 (saddle), NaN (unresolved)."""
    verdict = points[f"{prefix}verdict"]
    return verdict.map({MINIMUM: 1.0, SADDLE: 0.0, UNRESOLVED: np.nan}).astype(float)


def resolved_share(points: pd.DataFrame, prefix: str = "") -> tuple[int, int]:
    """(resolved, all) over the (cell, point, seed) rows on the plateau."""
    on = points[points.on_plateau]
    return int((on[f"{prefix}verdict"] != UNRESOLVED).sum()), len(on)


def summarise(points: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, point) over the seeds on the plateau there: per judged direction the
    median held-out curvature, its noise, the tolerance, the seeds that are saddles and minima (the
    rest unresolved); the median fitted lambda_min, gradient against noise, block weights."""
    rows = []
    on = points[points.on_plateau]
    for (p, q, point), group in on.groupby(["p", "q", "point"], sort=False):
        row = {"p": p, "q": q, "point": point, "seeds": len(group)}
        for prefix in judged(group):
            row.update(
                {
                    f"{prefix}lambda_min": float(group[f"{prefix}lambda_min"].median()),
                    f"{prefix}curvature": float(group[f"{prefix}curvature"].median()),
                    f"{prefix}curvature_noise": float(group[f"{prefix}curvature_noise"].median()),
                    f"{prefix}tol": float(group[f"{prefix}tol"].median()),
                    f"{prefix}saddles": int((group[f"{prefix}verdict"] == SADDLE).sum()),
                    f"{prefix}minima": int((group[f"{prefix}verdict"] == MINIMUM).sum()),
                }
            )
        row.update(
            {
                "canonical_weight": float(group.canonical_weight.median()),
                "gradient_norm": float(group.gradient_norm.median()),
                "gradient_ratio": float(group.gradient_ratio.median()),
                "median_plateau": float(group.plateau_length.median()),
                **{f"weight_{b}": float(group[f"weight_{b}"].median()) for b in BLOCKS},
            }
        )
        if "mode_rate" in group:
            row["mode_rate"] = float(group.mode_rate.median())
        rows.append(row)
    return pd.DataFrame(rows)


def _factor(predicted, measured) -> np.ndarray:
    return np.exp(np.abs(np.log(np.asarray(predicted, float) / np.asarray(measured, float))))


def escape_law(points: pd.DataFrame, escape: pd.DataFrame, rates: np.ndarray, sigma: float) -> pd.DataFrame:
    """Per run on its plateau at a fixed point, with AdamW's mode measured: the escape predicted from
    the mode's rate (``adamw.predicted_escape``: growth from sigma to 1 starting at the end of the
    initial drop, along the run's own schedule ``rates``) against the run's measured escape, where it
    escaped; the factor between them. ``escape``: escape.csv, whose drop ends start the growth."""
    frame = points[(points.kind == "fixed") & points.on_plateau & points.mode_rate.notna()].copy()
    frame["escape"] = frame.escape.astype(float)
    frame["escaped"] = np.isfinite(frame.escape) & (frame.escape >= 0) & ~frame.censored.astype(bool)
    frame["predicted_escape"] = [
        predicted_escape(rate, rates, int(drop), sigma) for rate, drop in zip(frame.mode_rate, frame.drop_end)
    ]
    frame["factor"] = np.where(frame.escaped, _factor(frame.predicted_escape, frame.escape), np.nan)
    frame["assumption"] = [assumption(row) if row.escaped else "" for row in frame.itertuples()]
    columns = [
        "p", "q", "seed", "point", "mode_rate", "drop_end", "escape", "escaped", "predicted_escape", "factor",
        "assumption",
    ]  # fmt: skip
    return frame[columns].reset_index(drop=True)


def assumption(row) -> str:
    """For an escaping run's row (its point's columns and the predicted and measured escape): the
    first of ``ASSUMPTIONS`` its data show broken, or ``holds``."""
    if row.factor <= ESCAPE_FACTOR:
        return "holds"
    if row.mode_rate <= 0:
        return "stable mode"
    if row.gradient_ratio > STATIONARY:
        return "not stationary"
    same_sign = row.mode_lambda_min * row.mode_curvature > 0
    if not same_sign or _factor(row.mode_lambda_min, row.mode_curvature) > ESCAPE_FACTOR:
        return "not an eigenvector"
    return "slower than linear" if row.predicted_escape < row.escape else "faster than linear"


def slope_law(points: pd.DataFrame, escape: pd.DataFrame, rates: np.ndarray, sigma: float) -> pd.DataFrame:
    """Per sweep cell and seed: the measured slope of the escape against log(1/sigma) (escape.csv's
    sigma sweep, ``escape.sigma_slope``) and the predicted 1 / (eta_T (|mu| - wd_v)), the mode's rate
    measured at the fixed point of that seed's run at the transformer's sigma, eta_T the learning
    rate at that run's measured escape; the factor between them."""
    rows = []
    fixed = points[(points.kind == "fixed") & points.on_plateau & points.mode_rate.notna()]
    sweeps = escape[escape.sweep == "sigma"]
    for (p, q, seed), runs in sweeps.groupby(["p", "q", "seed"], sort=False):
        point = fixed[np.isclose(fixed.p, p) & np.isclose(fixed.q, q) & (fixed.seed == seed)]
        own = runs[np.isclose(runs.value, sigma) & runs.escaped.astype(bool)]
        if not len(point) or not len(own):
            continue
        at = int(own.escape.iloc[0])
        rate = float(point.mode_rate.iloc[0])
        measured = sigma_slope(runs)
        predicted = predicted_slope(rate, float(rates[min(at, len(rates) - 1)]))
        rows.append(
            {
                "p": p,
                "q": q,
                "seed": int(seed),
                "mode_rate": rate,
                "escape": at,
                "measured_slope": measured,
                "predicted_slope": predicted,
                "factor": float(_factor(predicted, measured)) if np.isfinite(measured) and measured > 0 else np.nan,
            }
        )
    return pd.DataFrame(
        rows, columns=["p", "q", "seed", "mode_rate", "escape", "measured_slope", "predicted_slope", "factor"]
    )


def law_summary(law: pd.DataFrame) -> dict:
    """Over the escaping runs: how many, the rank correlation of predicted and measured escape, the
    median and largest factor, how many the prediction puts beyond the schedule, and how many runs
    name each of ``ASSUMPTIONS`` (``assumption <name>``)."""
    escaped = law[law.escaped.astype(bool)]
    finite = escaped[np.isfinite(escaped.predicted_escape)]
    correlation = (
        float(spearmanr(finite.predicted_escape, finite.escape).statistic) if len(finite) >= 3 else float("nan")
    )
    return {
        "runs": len(escaped),
        "beyond_schedule": int(len(escaped) - len(finite)),
        "rank_correlation": correlation,
        "median_factor": float(np.median(escaped.factor)) if len(escaped) else float("nan"),
        "max_factor": float(np.max(escaped.factor)) if len(escaped) else float("nan"),
        **{f"assumption {name}": int((escaped.assumption == name).sum()) for name in ASSUMPTIONS},
    }


__all__ = [
    "ASSUMPTIONS",
    "ESCAPE_FACTOR",
    "STATIONARY",
    "assumption",
    "JUDGED",
    "SLOPE_FACTOR",
    "escape_law",
    "join_runs",
    "judged",
    "law_summary",
    "point_label",
    "resolved_share",
    "seed_outcomes",
    "slope_law",
    "summarise",
]
