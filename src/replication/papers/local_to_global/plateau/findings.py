"""The plateau analysis' findings in words, written from its tables (figures/plateau_findings.md),
so that the documentation states what the data say and nothing typed by hand: where the plateau is
a saddle and where a minimum (``findings``), and what decides the escape at the sweeps' cells
(``escape_findings``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis import ASSUMPTIONS, JUDGED, STATIONARY, resolved_share
from .escape import EXPLANATIONS, cell_tests, median_escape, seed_tests
from .settings import BLOCKS
from .verdict import SADDLE, UNRESOLVED


def _cells(frame: pd.DataFrame) -> str:
    return ", ".join(f"({r.p:g}, {r.q:g})" for r in frame.itertuples()) or "none"


def _verdict_lines(cells: pd.DataFrame, prefix: str, what: str) -> list[str]:
    saddles, minima = cells[f"{prefix}saddles"], cells[f"{prefix}minima"]
    every = cells[saddles == cells.seeds]
    none = cells[minima == cells.seeds]
    unresolved = cells[saddles + minima == 0]
    mixed = cells.drop(index=every.index.union(none.index).union(unresolved.index))
    return [
        f"- **{what}**: a saddle in every seed at {len(every)} of {len(cells)} cells ({_cells(every)}); a minimum "
        f"in every seed at {len(none)} ({_cells(none)}); unresolved in every seed at {len(unresolved)} "
        f"({_cells(unresolved)}); seeds differ at {len(mixed)} ({_cells(mixed)}).",
    ]


def _point_findings(cells: pd.DataFrame, points: pd.DataFrame, z: float) -> list[str]:
    lines = []
    for prefix, what in JUDGED.items():
        if f"{prefix}saddles" in cells:
            lines += _verdict_lines(cells, prefix, what)
    resolved, total = resolved_share(points)
    horizon = bool(np.allclose(points.tol, points.mode_tol)) if "mode_tol" in points else False
    stated = (
        "the curvature that would grow a direction from sigma to 1 under gradient steps at the schedule's "
        "learning rates before the run ends"
        if horizon
        else f"the stated fraction of lambda_max, median {points.lambda_max.median():.3g}"
    )
    lines.append(
        f"- **Resolved**: {resolved} of {total} (cell, seed) verdicts on the full model "
        f"({resolved / max(total, 1):.0%}); tol median {cells.tol.median():.3g} ({stated}); held-out batches per "
        f"point: median {points.held_out_batches.median():.0f}, at most {points.held_out_batches.max():.0f}."
    )
    lines.append(_sign_line(points, z))
    every = cells[cells.saddles == cells.seeds]
    if len(every):
        blocks = every[[f"weight_{b}" for b in BLOCKS]].median().sort_values(ascending=False)
        top = ", ".join(f"{name.removeprefix('weight_')} {share:.2f}" for name, share in blocks.head(3).items())
        lines.append(
            f"- **Where the negative direction lies** (cells with a saddle in every seed, medians): its share in the "
            f"canonical directions is {every.canonical_weight.median():.2f}; the largest blocks are {top}."
        )
    stationary = points[points.gradient_ratio <= STATIONARY]
    lines.append(
        f"- **Near-stationary points**: the fitted batches' mean gradient is within {STATIONARY:g} x the norm of its "
        f"noise at {len(stationary)} of {len(points)} points (median ratio {points.gradient_ratio.median():.2g}); "
        "elsewhere the point still moves along the gradient, and its Hessian describes a slope, not a critical point."
    )
    lines.append(
        f"- The held-out curvature ranges over {cells.curvature.min():.3g} to {cells.curvature.max():.3g} "
        f"(median noise {cells.curvature_noise.median():.2g}); the fitted lambda_min over "
        f"{cells.lambda_min.min():.3g} to {cells.lambda_min.max():.3g}, below the held-out curvature by a median "
        f"{(points.bias).median():.2g} (the fitted set's bias)."
    )
    if "mode_rate" in points:
        lines += _optimiser_lines(points)
    return lines


def _sign_line(points: pd.DataFrame, z: float) -> str:
    """Where the held-out curvature is below 0 by z standard errors: a saddle of the loss in the strict
    sense, whether or not it is steep enough to count against tol."""
    negative = points[points.curvature + z * points.curvature_noise < 0]
    depth = negative.curvature.abs() / negative.tol
    return (
        f"- **Negative curvature, however shallow**: the held-out curvature is below 0 by {z:g} standard "
        f"errors at {len(negative)} of {len(points)} points ({_points(negative)})"
        + (f", at {depth.min():.2g} to {depth.max():.2g} x tol." if len(negative) else ".")
    )


def _points(frame: pd.DataFrame) -> str:
    return ", ".join(f"({r.p:g}, {r.q:g}) seed {int(r.seed)}" for r in frame.itertuples()) or "none"


def _optimiser_lines(points: pd.DataFrame) -> list[str]:
    """What AdamW's view adds: the mode's rate, where it lies, weight decay's and momentum's share."""
    unstable = points[points.mode_verdict == SADDLE]
    blocks = points[[f"mode_weight_{b}" for b in BLOCKS]].median().sort_values(ascending=False)
    top = ", ".join(f"{name.removeprefix('mode_weight_')} {share:.2f}" for name, share in blocks.head(3).items())
    return [
        f"- **AdamW's view**: the preconditioned Hessian's held-out curvature along its mode, median "
        f"{points.mode_curvature.median():.3g} (tolerance: the rate that ends the plateau within the run, median "
        f"{points.mode_tol.median():.3g}); the mode grows fast enough to end the plateau within the run at "
        f"{len(unstable)} of {len(points)} points. In parameter space (D^-1/2 w) it lies in {top} (medians). "
        f"Weight decay's share of its rate: median {(points.mode_decay / points.mode_curvature.abs()).median():.2g}; "
        f"momentum changes its growth per step by a factor {points.momentum_gain.median():.3g} (median); the "
        f"bias corrections at the point are {points.bias_correction_m.max():.4g} (m) and "
        f"{points.bias_correction_v.max():.4g} (v) at most.",
        *_unresolved_lines(points, "mode_", "AdamW's view"),
    ]


def _unresolved_lines(points: pd.DataFrame, prefix: str, what: str) -> list[str]:
    """Why the unresolved verdicts of a view stay so: the fitted set's bias over tol, and what it would
    take to bring it under tol if it falls as 1/sequences (measured near the diagonal) or as 1/sqrt."""
    open_ = points[points[f"{prefix}verdict"] == UNRESOLVED]
    if not len(open_):
        return []
    ratio = open_[f"{prefix}bias"] / open_[f"{prefix}tol"]
    return [
        f"- **Unresolved in {what}**: {len(open_)} of {len(points)} points ({_points(open_)}); the held-out "
        f"curvature there is {open_[f'{prefix}curvature'].min():.3g} to {open_[f'{prefix}curvature'].max():.3g}, "
        f"but the fitted set's bias is {ratio.min():.3g} to {ratio.max():.3g} x tol, so no minimum can be called: "
        f"a fitted set {ratio.clip(lower=1).min():.3g} to {ratio.max():.3g} times larger would be needed if the "
        f"bias falls as 1/sequences, {ratio.clip(lower=1).min() ** 2:.3g} to {ratio.max() ** 2:.3g} times if as "
        "1/sqrt(sequences)."
    ]


def findings(
    cells: pd.DataFrame,
    points: pd.DataFrame,
    summary: dict,
    slopes: pd.DataFrame,
    growth: pd.DataFrame | None = None,
    z: float = 3.0,
) -> str:
    """Markdown: per point, where the plateau is a saddle and where a minimum (full model, canonical
    restriction, AdamW's view), where the negative direction lies; then the escape predicted from
    AdamW's step against the measured one."""
    parts = [
        "# Minimum or saddle: findings",
        "",
        "Written by the pipeline from `results/local_to_global/plateau/cells.csv`, `points.csv`, `fits.csv` and "
        "`slopes.csv`.",
        "",
    ]
    on = points[points.on_plateau]
    for point, group in cells.groupby("point", sort=False):
        parts += [f"## {point}", "", *_point_findings(group, on[on.point == point], z), ""]
    parts += ["## The escape predicted from AdamW's step", ""]
    if not summary.get("runs"):
        parts.append("- No escaping run with its mode measured: nothing to compare.")
    else:
        parts.append(
            f"- Over {int(summary['runs'])} escaping runs ({int(summary['beyond_schedule'])} predicted never to "
            f"escape within the schedule): rank correlation {summary['rank_correlation']:.2f}, the prediction off "
            f"by a factor {summary['median_factor']:.2f} (median) and {summary['max_factor']:.2f} (largest)."
        )
        parts += [
            f"- {name}: {int(summary[f'assumption {name}'])} runs ({meaning})."
            for name, meaning in ASSUMPTIONS.items()
            if f"assumption {name}" in summary
        ]
    for (p, q), group in slopes.groupby(["p", "q"], sort=False):
        pairs = ", ".join(
            f"seed {r.seed} {r.measured_slope:.3g} vs {r.predicted_slope:.3g}" for r in group.itertuples()
        )
        parts.append(f"- Slope against log(1/sigma) at ({p:g}, {q:g}), measured vs predicted: {pairs}.")
    if growth is not None and len(growth):
        parts += ["", "## The instability seen growing", ""]
        for row in growth.itertuples():
            seen = (
                f"grows at {row.fitted_rate:.3g} per unit of learning rate over {row.checkpoints_fitted} checkpoints"
                if pd.notna(row.fitted_rate)
                else "never outgrows its noise before the loss moves"
            )
            parts.append(
                f"- ({row.p:g}, {row.q:g}) seed {row.seed}: the projection on AdamW's unstable mode {seen}; "
                f"predicted {row.predicted_rate:.3g}."
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
