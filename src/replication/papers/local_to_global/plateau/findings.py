"""The plateau analysis' findings in words, written from its tables (figures/plateau_findings.md),
so that the documentation states what the data say and nothing typed by hand: where the plateau is
a saddle and where a minimum (``findings``), and what decides the escape at the sweeps' cells
(``escape_findings``)."""

from __future__ import annotations

import pandas as pd

from .escape import EXPLANATIONS, cell_tests, median_escape, seed_tests
from .hessian import BLOCKS


def _cells(frame: pd.DataFrame) -> str:
    return ", ".join(f"({r.p:g}, {r.q:g})" for r in frame.itertuples()) or "none"


def _point_findings(cells: pd.DataFrame, significance: float) -> list[str]:
    every = cells[cells.saddles == cells.seeds]
    none = cells[cells.minima == cells.seeds]
    unresolved = cells[cells.saddles + cells.minima == 0]
    mixed = cells.drop(index=every.index.union(none.index).union(unresolved.index))
    canonical = cells[cells.canonical_saddles > 0]
    lines = [
        f"- **A saddle in every seed** (curvature along the lowest eigenvector on held-out batches < "
        f"-{significance:g} x its noise): {len(every)} of {len(cells)} cells: {_cells(every)}.",
        f"- **A minimum within the noise in every seed** (no negative curvature on the held-out batches, and none "
        f"on the fitted ones either): {len(none)} of {len(cells)} cells: {_cells(none)}.",
        f"- **Unresolved in every seed** (the fitted batches have a negative direction the held-out ones do not "
        f"confirm: the batches' noise hides whether the loss has one): {len(unresolved)} of {len(cells)} cells: "
        f"{_cells(unresolved)}.",
        f"- **Seeds differ**: {len(mixed)} cells: {_cells(mixed)}.",
        f"- **Canonical directions**: a saddle of the restricted Hessian in some seed in "
        f"{len(canonical)} of {len(cells)} cells ({_cells(canonical)}); elsewhere no negative curvature is "
        "found there, as Thm 1 says.",
    ]
    fitted = cells[cells.lambda_min < -significance * cells.noise]
    lines.append(
        f"- **Saddles of the fitted batches only**: lambda_min on the batches the eigenvector was found on is below "
        f"-{significance:g} x its spread there in {len(fitted)} of {len(cells)} cells (medians over seeds); "
        f"{int((fitted.saddles < fitted.seeds).sum())} of them are not a saddle in every seed on held-out batches."
    )
    if len(every):
        blocks = every[[f"weight_{b}" for b in BLOCKS]].median().sort_values(ascending=False)
        top = ", ".join(f"{name.removeprefix('weight_')} {share:.2f}" for name, share in blocks.head(3).items())
        lines.append(
            f"- **Where the negative direction lies** (cells with a saddle in every seed, medians): its share in the "
            f"canonical directions is {every.canonical_weight.median():.2f}; the largest blocks are {top}."
        )
    lines.append(
        f"- The held-out curvature ranges over {cells.curvature.min():.3g} to {cells.curvature.max():.3g} "
        f"(median noise {cells.curvature_noise.median():.2g}); lambda_min on the fitted batches over "
        f"{cells.lambda_min.min():.3g} to {cells.lambda_min.max():.3g}, below the held-out curvature by a median "
        f"{(cells.curvature - cells.lambda_min).median():.2g} (the fitted batches' bias); the gradient norm has "
        f"median {cells.gradient_norm.median():.2g}."
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


def _medians(runs: pd.DataFrame, sweep: str) -> str:
    """``value: median escape`` per value of ``sweep`` over the seeds (``>=``: a lower bound)."""
    parts = []
    for value, group in runs[runs.sweep == sweep].groupby("value", sort=True):
        median, bound = median_escape(group)
        parts.append(f"{value:g}: {'>= ' if bound else ''}{median:.0f}")
    return ", ".join(parts)


def _told(hold: int, told: int, seeds: int) -> str:
    if not told:
        return f"cannot be told in any of the {seeds} seeds"
    return f"holds in {hold} of the {told} seeds (of {seeds}) that can be told"


def escape_findings(escape: pd.DataFrame, factor: float) -> str:
    """Markdown: per cell of the sweeps (escape.csv), what its data support (saddle, noise, neither,
    not checkable), with the per-seed slopes and ratios and the median escape per value."""
    seeds, cells = seed_tests(escape, factor), cell_tests(escape, factor)
    parts = [
        "## What decides the escape",
        "",
        "Written by the pipeline from `results/local_to_global/plateau/escape.csv`: the standard init's runs "
        "trained again with the init's scale sigma or the batch size changed (the phase grid's horizon, stopping "
        "rule and escape measure). A saddle escape grows with log(1/sigma) (5i) and does not depend on the batch "
        f"(5b: at the largest batch at most {factor:g} times later than at the smallest); a noise-driven escape "
        "slows with a bigger batch. Escape iterations below are medians over seeds, a run that never escaped "
        "counted at the horizon (`>=`: a lower bound, half the seeds or more never escaped).",
        "",
    ]
    for cell in cells.itertuples():
        runs = escape[(escape.p == cell.p) & (escape.q == cell.q)]
        own = seeds[(seeds.p == cell.p) & (seeds.q == cell.q)]
        slopes = ", ".join(f"{slope:.3g}" for slope in own.slope.dropna()) or "none"
        told = own[own.ratio.notna()]
        ratios = ", ".join(f"{'>= ' if bound else ''}{ratio:.3g}" for ratio, bound in zip(told.ratio, told.ratio_bound))
        parts.append(
            f"- **({cell.p:g}, {cell.q:g}): {cell.explanation}.** Growth with log(1/sigma) "
            f"{_told(cell.grows_hold, cell.grows_told, cell.seeds)} (slopes, iterations per unit of "
            f"log(1/sigma): {slopes}); escape by sigma {_medians(runs, 'sigma')}. Batch independence "
            f"{_told(cell.batch_hold, cell.batch_told, cell.seeds)} (largest over smallest batch: {ratios or 'none'}); "
            f"escape by batch {_medians(runs, 'batch_size')}."
        )
    counts = "; ".join(
        f"{kind}: {(cells.explanation == kind).sum()} ({_cells(cells[cells.explanation == kind])})"
        for kind in EXPLANATIONS
    )
    parts += ["", f"Cells per explanation: {counts}.", ""]
    return "\n".join(parts)
