"""Claims of the plateau analysis, per (p, q) cell over seeds (Clopper-Pearson intervals): whether
the plateau point is a local minimum of the full model and of its canonical restriction, as the
canonical model's Thm 1 says above the line, and whether the escape follows the saddle law."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim, not_checkable, over_seeds

from .settings import HessianSettings

PAPER = "Local to Global"
FIGURE = "Curvature at the plateau (beyond the paper)"
LAW_FIGURE = "Plateau length against the saddle law (beyond the paper)"
LAW_FACTOR = 2.0  # "within a factor 2"


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
        lowest, noise = group[f"{prefix}lambda_1" if not prefix else f"{prefix}lambda_min"], group[f"{prefix}noise"]
        stats = over_seeds(~group[f"{prefix}saddle"].to_numpy(bool))
        reason = f"lambda_min x 1e3: {_values(group, lowest.name)}; noise x 1e3: {_values(group, noise.name)}"
        if not prefix:
            saddles = group[group.saddle]
            reason += "; gradient norm " + _values(group, "gradient_norm", 1.0)
            if len(saddles):
                reason += "; bottom eigenvector's share in the canonical directions " + _values(
                    saddles, "canonical_weight", 1.0
                )
        rows.append(
            Claim(
                PAPER,
                f"{claim} (p={p:g}, q={q:g}) {point}",
                FIGURE,
                statement,
                float(lowest.min()),
                f"lambda_min >= -{hessian.significance:g} x its noise (standard error over {hessian.batches} batches) "
                "(per seed)",
                reason=reason,
                rule=f"per seed; {stats.pop('rule')}",
                **stats,
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
    """``points``: analysis.join_runs' table; ``fits``: the saddle law per point."""
    return (
        _cell_claims(points, hessian, "3m", "", "the full model")
        + _cell_claims(points, hessian, "3c", "canonical_", "the full loss restricted to the canonical directions")
        + [saddle_law_claim(fit) for fit in fits]
    )
