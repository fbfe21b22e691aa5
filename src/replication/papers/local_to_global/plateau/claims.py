"""Claims of the plateau analysis, per (p, q) cell over seeds (Clopper-Pearson intervals): whether
the plateau point is a local minimum of the full model and of its canonical restriction, as the
canonical model's Thm 1 says above the line, whether the escape follows the saddle law, and what
decides the escape at the sweeps' cells: it grows with log(1/sigma) (5i) and does not depend on
the batch's noise (5b), as a saddle escape does."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim, not_checkable, over_seeds
from replication.contract import BEYOND_THE_PAPER

from .. import PAPER
from ..phase.grid import Cell
from .analysis import ESCAPE_FACTOR, SLOPE_FACTOR, resolved_share, seed_outcomes
from .escape import seed_tests
from .settings import EscapeSettings, HessianSettings

FIGURE = "Curvature at the plateau (beyond the paper)"
LAW_FIGURE = "The escape predicted from AdamW's step (beyond the paper)"
ESCAPE_FIGURE = "What decides the escape (beyond the paper)"
GROWTH_FIGURE = "The instability seen growing (beyond the paper)"
RESOLVED = 0.9  # the verdicts must be decided at this share of (cell, point, seed)


def _values(group: pd.DataFrame, column: str) -> str:
    return ", ".join(f"seed {int(r.seed)} {getattr(r, column):.3g}" for r in group.itertuples())


def tolerance_text(hessian: HessianSettings) -> str:
    """What tol is, in words, for the loss' verdicts."""
    if hessian.tolerance == "horizon":
        return (
            "log(1/sigma) / sum of the learning rates after the point: a direction less curved cannot grow from "
            "sigma to 1 under gradient steps at the schedule's learning rates before the run ends"
        )
    return f"{hessian.tolerance:g} x lambda_max"


def _threshold(hessian: HessianSettings, tol: str) -> str:
    z = f"{hessian.significance:g}"
    return (
        f"a saddle: held-out curvature along the lowest eigenvector + {z} SE < -tol ({tol}); a minimum: held-out "
        f"curvature - {z} SE > -tol, fitted lambda_min - {z} SE > -tol, noise and fitted bias <= tol; "
        f"unresolved otherwise (per seed; {hessian.held_out.least}-{hessian.held_out.most} held-out batches of "
        f"{hessian.batch_size} sequences)"
    )


def _cell_claims(points: pd.DataFrame, hessian: HessianSettings, claim: str, prefix: str, what: str) -> list[Claim]:
    rows = []
    on = points[points.on_plateau]
    for (p, q, point), group in on.groupby(["p", "q", "point"], sort=False):
        statement = (
            f"Standard init, (p, q) = ({p:g}, {q:g}) (p + q > 1), {point}: the plateau point is a local minimum "
            f"of {what} up to the stated tolerance (no direction curved below -tol), as the canonical model predicts "
            "(Thm 1)."
        )
        reason = (
            f"held-out curvature: {_values(group, f'{prefix}curvature')}; its standard error: "
            f"{_values(group, f'{prefix}curvature_noise')}; tol: {_values(group, f'{prefix}tol')}; fitted lambda_min: "
            f"{_values(group, f'{prefix}lambda_min')}; verdicts: "
            + ", ".join(f"seed {int(r.seed)} {getattr(r, f'{prefix}verdict')}" for r in group.itertuples())
        )
        if not prefix:
            reason += "; gradient norm over its noise " + _values(group, "gradient_ratio")
        rows.append(
            _told_claim(
                f"{claim} (p={p:g}, q={q:g}) {point}",
                FIGURE,
                statement,
                _threshold(hessian, tolerance_text(hessian)),
                seed_outcomes(group, prefix),
                group[f"{prefix}curvature"],
                reason,
            )
        )
    return rows


def resolved_claim(points: pd.DataFrame, prefix: str, claim: str, what: str) -> Claim:
    resolved, total = resolved_share(points, prefix)
    share = resolved / total if total else float("nan")
    statement = (
        f"Standard init, every cell above the line: the verdict on {what} (saddle or minimum at the stated "
        f"tolerance) is decided at >= {RESOLVED:.0%} of the (cell, point, seed) on the plateau."
    )
    if not total:
        return not_checkable(PAPER.name, claim, FIGURE, statement, "no point on the plateau", spec=BEYOND_THE_PAPER)
    return Claim(
        PAPER.name,
        claim,
        FIGURE,
        statement,
        share,
        f"resolved share >= {RESOLVED:g}",
        bool(share >= RESOLVED),
        reason=f"{resolved} of {total} resolved",
        rule="one count over the points",
        n_runs=total,
        spec=BEYOND_THE_PAPER,
    )


def escape_law_claim(summary: dict) -> Claim:
    statement = (
        "Standard init, every run that escaped: the escape iteration predicted from AdamW's linearised step "
        "(growth from sigma to 1 at eta_t (|mu| - wd_v) per step from the end of the initial drop, mu held out at "
        f"the fixed point; no fitted constant) is within a factor {ESCAPE_FACTOR:g} of the measured one."
    )
    if not summary.get("runs"):
        return not_checkable(
            PAPER.name, "5t", LAW_FIGURE, statement, "no run escaped with its mode measured", spec=BEYOND_THE_PAPER
        )
    return Claim(
        PAPER.name,
        "5t",
        LAW_FIGURE,
        statement,
        summary["max_factor"],
        f"largest factor between predicted and measured escape <= {ESCAPE_FACTOR:g}",
        bool(summary["max_factor"] <= ESCAPE_FACTOR),
        reason=(
            f"{int(summary['runs'])} escaping runs ({int(summary['beyond_schedule'])} predicted never to escape): rank "
            f"correlation {summary['rank_correlation']:.2f}, median factor {summary['median_factor']:.2f}, "
            f"largest {summary['max_factor']:.2f}"
        ),
        rule="one comparison over the runs",
        n_runs=int(summary["runs"]),
        spec=BEYOND_THE_PAPER,
    )


def slope_claims(slopes: pd.DataFrame) -> list[Claim]:
    """Per sweep cell over seeds (``5s``): the escape's slope against log(1/sigma) within a factor
    1.5 of AdamW's prediction 1 / (eta_T (|mu| - wd_v))."""
    rows = []
    for (p, q), group in slopes.groupby(["p", "q"], sort=False):
        outcomes = (group.factor <= SLOPE_FACTOR).astype(float).where(group.factor.notna())
        reasons = "; ".join(
            f"seed {r.seed} measured {r.measured_slope:.3g}, predicted {r.predicted_slope:.3g}"
            for r in group.itertuples()
        )
        rows.append(
            _told_claim(
                f"5s ({Cell.keyed(p, q).label})",
                LAW_FIGURE,
                f"Standard init, (p, q) = ({p:g}, {q:g}): the escape moves with log(1/sigma) at the slope AdamW's "
                "linearised step predicts, 1 / (eta_T (|mu| - wd_v)), within a factor "
                f"{SLOPE_FACTOR:g} (iterations per unit of log(1/sigma); no fitted constant).",
                f"measured / predicted slope within a factor {SLOPE_FACTOR:g} (per seed)",
                outcomes,
                group.factor,
                reasons,
            )
        )
    return rows


def growth_claims(rates: pd.DataFrame) -> list[Claim]:
    """Per growth cell over seeds (``5g``): the projection on AdamW's unstable mode grows at the
    predicted rate |mu| - wd_v per unit of learning rate, within a factor 1.5, before the loss moves."""
    rows = []
    for (p, q), group in rates.groupby(["p", "q"], sort=False):
        outcomes = (group.factor <= SLOPE_FACTOR).astype(float).where(group.factor.notna())
        reasons = "; ".join(
            f"seed {r.seed} fitted {r.fitted_rate:.3g} over {r.checkpoints_fitted} checkpoints, predicted "
            f"{r.predicted_rate:.3g}"
            for r in group.itertuples()
        )
        rows.append(
            _told_claim(
                f"5g ({Cell.keyed(p, q).label})",
                GROWTH_FIGURE,
                f"Standard init, (p, q) = ({p:g}, {q:g}): through the plateau, the parameters' projection on the "
                "unstable mode of AdamW's preconditioned Hessian grows at its predicted rate |mu| - wd_v per unit of "
                f"learning rate, within a factor {SLOPE_FACTOR:g}, before the loss moves.",
                f"fitted / predicted rate within a factor {SLOPE_FACTOR:g} (per seed; not checkable where the "
                "projection never outgrows its noise before the loss moves, or the mode is stable)",
                outcomes,
                group.factor,
                reasons,
            )
        )
    return rows


def plateau_claims(
    points: pd.DataFrame, hessian: HessianSettings, summary: dict, slopes: pd.DataFrame, growth=None
) -> list[Claim]:
    """``points``: analysis.join_runs' table; ``summary``: analysis.law_summary; ``slopes``:
    analysis.slope_law; ``growth``: the growth runs' rates (growth_rates.csv). The sweeps' claims:
    ``escape_claims``."""
    claims = _cell_claims(points, hessian, "3m", "", "the full model")
    claims += _cell_claims(points, hessian, "3c", "canonical_", "the full loss restricted to the canonical directions")
    claims += [
        resolved_claim(points, "", "3r", "the full model"),
        resolved_claim(points, "canonical_", "3r canonical", "the canonical restriction"),
    ]
    if "mode_rate" in points:
        claims += [escape_law_claim(summary), *slope_claims(slopes)]
    if growth is not None:
        claims += growth_claims(growth)
    return claims


def _listed(values) -> str:
    return ", ".join(f"{value:g}" for value in values)


def _told_claim(claim_id: str, figure: str, statement: str, threshold: str, outcomes, measured, reasons: str) -> Claim:
    """One cell's row over the seeds whose outcome could be told (``outcomes``: 1.0, 0.0 or NaN per
    seed), the median of ``measured`` over them; ``not checkable`` with ``reasons`` where none could."""
    told = outcomes.dropna()
    if not len(told):
        return not_checkable(
            PAPER.name, claim_id, figure, statement, f"no seed can be told: {reasons}", spec=BEYOND_THE_PAPER
        )
    stats = over_seeds(told.to_numpy(bool))
    return Claim(
        PAPER.name,
        claim_id,
        figure,
        statement,
        float(np.median(measured[told.index])),
        threshold,
        reason=reasons,
        rule=f"per seed where it can be told; {stats.pop('rule')}",
        **stats,
        spec=BEYOND_THE_PAPER,
    )


def escape_claims(escape: pd.DataFrame, settings: EscapeSettings) -> list[Claim]:
    """Per cell of ``escape`` (escape.csv): ``5i``, the escape grows with log(1/sigma), and ``5b``, it
    does not depend on the batch's noise (``escape.seed_tests`` per seed, the one verdict rule over
    the seeds where each can be told)."""
    factor, rows = settings.batch_factor, []
    sweeps = escape.groupby("sweep")
    sigma_fixed = _listed(sweeps.get_group("batch_size").sigma.unique())
    batch_fixed = _listed(sweeps.get_group("sigma").batch_size.unique())
    smallest, largest = min(settings.batch_size), max(settings.batch_size)
    for (p, q), seeds in seed_tests(escape, factor).groupby(["p", "q"], sort=False):
        cell = f"Standard init, (p, q) = ({p:g}, {q:g})"
        label = Cell.keyed(p, q).label
        slopes = "; ".join(
            f"seed {r.seed} "
            + (f"slope {r.slope:.3g}" if np.isfinite(r.slope) else "fewer than 2 sigma values escaped")
            for r in seeds.itertuples()
        )
        rows.append(
            _told_claim(
                f"5i ({label})",
                ESCAPE_FIGURE,
                f"{cell}: the escape grows with log(1/sigma), as from a saddle (sigma {_listed(settings.sigma)} at "
                f"batch {batch_fixed}; the phase grid's horizon, stopping rule and escape measure).",
                "least-squares slope of the escape iteration against log(1/sigma) > 0, over the sigma values where "
                "it escaped (per seed; at least 2)",
                seeds.grows,
                seeds.slope,
                slopes,
            )
        )
        ratios = "; ".join(
            f"seed {r.seed} "
            + (
                f"ratio {'>= ' if r.ratio_bound else ''}{r.ratio:.3g}"
                if np.isfinite(r.ratio)
                else f"batch {smallest} never escaped"
            )
            for r in seeds.itertuples()
        )
        rows.append(
            _told_claim(
                f"5b ({label})",
                ESCAPE_FIGURE,
                f"{cell}: the escape does not depend on batch noise: at batch {largest} it comes at most "
                f"{factor:g} times later than at batch {smallest} (batch {_listed(settings.batch_size)} at sigma "
                f"{sigma_fixed}, the same schedule), as from a saddle; a noise-driven escape slows with a bigger "
                "batch.",
                f"escape at batch {largest} / escape at batch {smallest} <= {factor:g} (per seed; a run that never "
                "escaped counts as the horizon, a lower bound that tells only above the factor)",
                seeds.batch_free,
                seeds.ratio,
                ratios,
            )
        )
    return rows
