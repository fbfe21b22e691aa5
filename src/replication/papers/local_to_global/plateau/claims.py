"""Claims of the plateau analysis, per (p, q) cell over seeds (Clopper-Pearson intervals): whether
the plateau point is a local minimum of the full model and of its canonical restriction, as the
canonical model's Thm 1 says above the line, whether the escape follows the saddle law, and what
decides the escape at the sweeps' cells: it grows with log(1/sigma) (5i) and does not depend on
the batch's noise (5b), as a saddle escape does."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim, not_checkable, over_seeds

from ..phase.grid import Cell
from .analysis import LOWEST, SADDLE, seed_outcomes
from .escape import seed_tests
from .settings import EscapeSettings, HessianSettings

PAPER = "Local to Global"
FIGURE = "Curvature at the plateau (beyond the paper)"
LAW_FIGURE = "Plateau length against the saddle law (beyond the paper)"
LAW_FACTOR = 2.0  # "within a factor 2"
ESCAPE_FIGURE = "What decides the escape (beyond the paper)"


def _values(group: pd.DataFrame, column: str, scale: float = 1e3) -> str:
    return ", ".join(f"seed {int(r.seed)} {getattr(r, column) * scale:.3f}" for r in group.itertuples())


def _cell_claims(points: pd.DataFrame, hessian: HessianSettings, claim: str, prefix: str, what: str) -> list[Claim]:
    rows = []
    on = points[points.on_plateau]
    for (p, q, point), group in on.groupby(["p", "q", "point"], sort=False):
        statement = (
            f"Standard init, (p, q) = ({p:g}, {q:g}) (p + q > 1), {point}: the plateau point is a local minimum "
            f"of {what}, as the canonical model predicts (Thm 1)."
        )
        reason = (
            f"held-out curvature x 1e3: {_values(group, f'{prefix}curvature')}; its noise x 1e3: "
            f"{_values(group, f'{prefix}curvature_noise')}; lambda_min on the fitted batches x 1e3: "
            f"{_values(group, LOWEST[prefix])}; its spread x 1e3: {_values(group, f'{prefix}noise')}; verdicts: "
            + ", ".join(f"seed {int(r.seed)} {getattr(r, f'{prefix}verdict')}" for r in group.itertuples())
        )
        if not prefix:
            saddles = group[group.verdict == SADDLE]
            reason += "; gradient norm " + _values(group, "gradient_norm", 1.0)
            if len(saddles):
                reason += "; bottom eigenvector's share in the canonical directions " + _values(
                    saddles, "canonical_weight", 1.0
                )
        rows.append(
            _told_claim(
                f"{claim} (p={p:g}, q={q:g}) {point}",
                FIGURE,
                statement,
                f"a minimum: the curvature along the lowest eigenvector on {hessian.batches} held-out batches >= "
                f"-{hessian.significance:g} x its standard error and lambda_min on the fitted batches >= "
                f"-{hessian.significance:g} x its spread there; a saddle: the held-out curvature below; unresolved "
                "otherwise (per seed)",
                seed_outcomes(group, prefix),
                group[f"{prefix}curvature"],
                reason,
            )
        )
    return rows


def saddle_law_claim(fit: dict) -> Claim:
    statement = (
        f"Standard init, every cell above the line, {fit['point']}: the plateau length follows the saddle law "
        f"log(1/sigma) / |lambda_min| within a factor {LAW_FACTOR:g} (fitted on every other cell, checked on the rest)."
    )
    claim_id = f"5s {fit['point']}"
    if not np.isfinite(fit.get("max_factor", np.nan)):
        return not_checkable(
            PAPER,
            claim_id,
            LAW_FIGURE,
            statement,
            f"{fit['runs_fit']} runs to fit and {fit['runs_check']} to check escaped from a saddle "
            "(at least 1 and 3 needed)",
        )
    return Claim(
        PAPER,
        claim_id,
        LAW_FIGURE,
        statement,
        fit["max_factor"],
        f"largest factor between prediction and measurement <= {LAW_FACTOR:g} on the checked half",
        bool(fit["max_factor"] <= LAW_FACTOR),
        reason=(
            f"constant {fit['constant']:.3g} from {fit['runs_fit']} runs; on {fit['runs_check']} checked runs: rank "
            f"correlation {fit['rank_correlation']:.2f}, median factor {fit['median_factor']:.2f}, "
            f"largest {fit['max_factor']:.2f}"
        ),
        rule="one fit over the runs",
        n_runs=fit["runs_check"],
    )


def plateau_claims(points: pd.DataFrame, hessian: HessianSettings, fits: list[dict]) -> list[Claim]:
    """``points``: analysis.join_runs' table; ``fits``: the saddle law per point. The sweeps' claims:
    ``escape_claims``."""
    return (
        _cell_claims(points, hessian, "3m", "", "the full model")
        + _cell_claims(points, hessian, "3c", "canonical_", "the full loss restricted to the canonical directions")
        + [saddle_law_claim(fit) for fit in fits]
    )


def _listed(values) -> str:
    return ", ".join(f"{value:g}" for value in values)


def _told_claim(claim_id: str, figure: str, statement: str, threshold: str, outcomes, measured, reasons: str) -> Claim:
    """One cell's row over the seeds whose outcome could be told (``outcomes``: 1.0, 0.0 or NaN per
    seed), the median of ``measured`` over them; ``not checkable`` with ``reasons`` where none could."""
    told = outcomes.dropna()
    if not len(told):
        return not_checkable(PAPER, claim_id, figure, statement, f"no seed can be told: {reasons}")
    stats = over_seeds(told.to_numpy(bool))
    return Claim(
        PAPER,
        claim_id,
        figure,
        statement,
        float(np.median(measured[told.index])),
        threshold,
        reason=reasons,
        rule=f"per seed where it can be told; {stats.pop('rule')}",
        **stats,
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
