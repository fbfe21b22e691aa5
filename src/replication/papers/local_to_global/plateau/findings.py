"""The plateau analysis' findings in words, written from its tables (figures/plateau_findings.md),
so that the documentation states what the data say and nothing typed by hand."""

from __future__ import annotations

import pandas as pd

from .hessian import BLOCKS


def _cells(frame: pd.DataFrame) -> str:
    return ", ".join(f"({r.p:g}, {r.q:g})" for r in frame.itertuples()) or "none"


def _point_findings(cells: pd.DataFrame, significance: float) -> list[str]:
    every = cells[cells.saddles == cells.seeds]
    none = cells[cells.saddles == 0]
    mixed = cells[(cells.saddles > 0) & (cells.saddles < cells.seeds)]
    canonical = cells[cells.canonical_saddles > 0]
    lines = [
        f"- **A saddle in every seed** (lambda_min < -{significance:g} x its noise): {len(every)} of {len(cells)} "
        f"cells: {_cells(every)}.",
        f"- **A minimum within the noise in every seed**: {len(none)} of {len(cells)} cells: {_cells(none)}.",
        f"- **Seeds disagree**: {len(mixed)} cells: {_cells(mixed)}.",
        f"- **Canonical directions**: the restricted Hessian has a significant negative eigenvalue in some seed in "
        f"{len(canonical)} of {len(cells)} cells ({_cells(canonical)}); elsewhere it is positive semi-definite "
        "within the noise, as Thm 1 says.",
    ]
    if len(every):
        blocks = every[[f"weight_{b}" for b in BLOCKS]].median().sort_values(ascending=False)
        top = ", ".join(f"{name.removeprefix('weight_')} {share:.2f}" for name, share in blocks.head(3).items())
        lines.append(
            f"- **Where the negative direction lies** (cells with a saddle in every seed, medians): its share in the "
            f"canonical directions is {every.canonical_weight.median():.2f}; the largest blocks are {top}."
        )
    lines.append(
        f"- lambda_min ranges over {cells.lambda_min.min():.3g} to {cells.lambda_min.max():.3g} (median noise "
        f"{cells.noise.median():.2g}); the gradient norm there has median {cells.gradient_norm.median():.2g}."
    )
    return lines


def findings(cells: pd.DataFrame, fits: pd.DataFrame, significance: float) -> str:
    """Markdown: per point, where the plateau is a saddle and where a minimum, what the canonical
    restriction says, where the negative direction lies; then the saddle law's fit."""
    parts = [
        "# Minimum or saddle: findings",
        "",
        "Written by the pipeline from `results/local_to_global/plateau/cells.csv` and `fits.csv`.",
        "",
    ]
    for point, group in cells.groupby("point", sort=False):
        parts += [f"## {point}", "", *_point_findings(group, significance), ""]
    parts += ["## The saddle law", ""]
    for fit in fits.itertuples():
        if pd.isna(fit.max_factor):
            parts.append(f"- {fit.point}: not checkable ({fit.runs_fit} runs to fit, {fit.runs_check} to check).")
        else:
            parts.append(
                f"- {fit.point}: plateau length = {fit.constant:.3g} x log(1/sigma) / |lambda_min| fitted on "
                f"{fit.runs_fit} runs; "
                f"on {fit.runs_check} held-out runs the rank correlation is {fit.rank_correlation:.2f} and the "
                "prediction is off by "
                f"a factor of {fit.median_factor:.2f} (median) and {fit.max_factor:.2f} (largest)."
            )
    return "\n".join(parts) + "\n"
