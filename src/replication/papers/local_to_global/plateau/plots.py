"""Figures of the plateau analysis: the lowest curvature over (p, q) (full model and canonical
restriction, and AdamW's view), the escape predicted from AdamW's step against the measured one,
where the bottom eigenvector lies, and the
escape iteration against the init's scale and the batch size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import SymLogNorm

from replication.claims import cell_holds

from ..phase.plots import PQGrid
from .analysis import ESCAPE_FACTOR, SLOPE_FACTOR
from .escape import cell_tests, escape_or_horizon, median_escape
from .growth import fitted_rate, grown
from .settings import BLOCKS

LABELS = {"": "full model", "canonical_": "canonical directions", "mode_": "AdamW's view (D^-1/2 H D^-1/2)"}
SCALE = 100.0  # the colour scale's ends, in units of the tolerance: beyond it, a clear verdict either way


def curvature_heatmaps(cells: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """One row per point, one column per direction judged (full model, canonical restriction and,
    where measured, AdamW's preconditioned Hessian): the median held-out curvature along the lowest
    eigenvector over seeds in units of its tolerance (so -1 is the line a saddle must cross), on a
    symmetric-log colour scale whose bar is in the same units as the number in each cell; with the
    seeds' verdicts (S saddle, M minimum, the rest unresolved: ``verdict.decide``), a black outline
    where the claim fails (no minimum by the one verdict rule), hatched where no seed is resolved."""
    points = list(dict.fromkeys(cells.point))
    prefixes = [prefix for prefix in LABELS if f"{prefix}curvature" in cells]
    grid = PQGrid.of(cells)
    norm = SymLogNorm(linthresh=1.0, vmin=-SCALE, vmax=SCALE, base=10)
    fig, axes = plt.subplots(
        len(points), len(prefixes), figsize=(4.3 * len(prefixes), 4.0 * len(points)), squeeze=False
    )
    rows = []
    for r, point in enumerate(points):
        frame = cells[cells.point == point]
        for c, prefix in enumerate(prefixes):
            ax = axes[r, c]
            ratio = frame[f"{prefix}curvature"] / frame[f"{prefix}tol"]
            values = grid.values(frame.assign(ratio=ratio), "ratio")
            image = ax.pcolormesh(
                grid.p_edges, grid.q_edges, np.ma.masked_invalid(values), cmap="PuOr_r", norm=norm, shading="flat"
            )
            bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03, extend="both")
            ticks = [-100, -10, -1, 0, 1, 10, 100]
            bar.set_ticks(ticks, labels=[f"{tick:g}" for tick in ticks])
            bar.ax.tick_params(labelsize=6)
            bar.set_label("held-out curvature / tol", fontsize=7)
            for row, value in zip(frame.itertuples(), ratio):
                saddles, minima = getattr(row, f"{prefix}saddles"), getattr(row, f"{prefix}minima")
                told = saddles + minima
                resolved = told > 0
                if not resolved:
                    ax.add_patch(grid.box(row.p, row.q, fill=False, hatch="///", edgecolor="0.45", lw=0))
                minimum = bool(resolved and cell_holds(minima / told))
                if resolved and not minimum:
                    ax.add_patch(grid.box(row.p, row.q, fill=False, color="black", lw=1.5))
                ink = "white" if abs(value) > 0.3 * SCALE else "black"  # light on the map's dark ends
                ax.text(
                    row.p,
                    row.q,
                    f"{value:.2g}\n{saddles}S {minima}M/{row.seeds}",
                    ha="center",
                    va="center",
                    fontsize=5,
                    color=ink,
                )
                rows.append(
                    {
                        "point": point,
                        "direction": LABELS[prefix],
                        "p": row.p,
                        "q": row.q,
                        "curvature": getattr(row, f"{prefix}curvature"),
                        "curvature_noise": getattr(row, f"{prefix}curvature_noise"),
                        "tol": getattr(row, f"{prefix}tol"),
                        "curvature_over_tol": value,
                        "lambda_min": getattr(row, f"{prefix}lambda_min"),
                        "resolved": resolved,
                        "saddles": saddles,
                        "minima": minima,
                        "seeds": row.seeds,
                        "local_minimum": minimum,
                    }
                )
            grid.axes(ax, f"{point}: {LABELS[prefix]}")
    fig.suptitle(
        "Curvature at the plateau along the lowest eigenvector, on held-out batches, over its tolerance\n"
        "(per cell: that ratio, seeds that are saddles S and minima M; black outline: not a minimum; hatched: "
        "no seed resolved)",
        fontsize=9,
    )
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def escape_law_figure(law: pd.DataFrame, slopes: pd.DataFrame, summary: dict) -> tuple[plt.Figure, pd.DataFrame]:
    """Left: every escaping run's escape iteration predicted from AdamW's mode against the measured
    one (log-log; the diagonal and the factor-2 band); right: at the sweeps' cells, the slope of the
    escape against log(1/sigma), predicted against measured (the factor-1.5 band)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0))
    escaped = law[law.escaped.astype(bool) & np.isfinite(law.predicted_escape)]
    panels = (
        (axes[0], escaped.escape, escaped.predicted_escape, ESCAPE_FACTOR, "escape iteration"),
        (axes[1], slopes.measured_slope, slopes.predicted_slope, SLOPE_FACTOR, "iterations per unit of log(1/sigma)"),
    )
    for ax, measured, predicted, factor, what in panels:
        measured, predicted = (pd.to_numeric(values).to_numpy(float) for values in (measured, predicted))
        finite = np.isfinite(measured) & np.isfinite(predicted) & (measured > 0) & (predicted > 0)
        low, high = (
            (
                float(min(measured[finite].min(), predicted[finite].min())) / 2,
                2 * float(max(measured[finite].max(), predicted[finite].max())),
            )
            if finite.any()
            else (1.0, 10.0)
        )
        line = np.geomspace(low, high, 20)
        ax.plot(line, line, color="black", lw=0.8)
        ax.fill_between(line, line / factor, line * factor, color="0.85", lw=0, label=f"within a factor {factor:g}")
        if finite.any():
            ax.scatter(measured[finite], predicted[finite], s=14, alpha=0.8, label=f"{int(finite.sum())} runs")
        else:
            ax.text(
                0.5,
                0.5,
                "nothing to compare:\nno escaping run with its mode measured",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=7,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_xlabel(f"measured {what}")
        ax.set_ylabel(f"predicted {what}")
        ax.legend(fontsize=6, loc="upper left")
    axes[0].set_title(
        f"escape: rank corr. {summary.get('rank_correlation', np.nan):.2f}, median factor "
        f"{summary.get('median_factor', np.nan):.2f}, largest {summary.get('max_factor', np.nan):.2f}",
        fontsize=8,
    )
    axes[1].set_title("slope against log(1/sigma), sweep cells, per seed", fontsize=8)
    fig.suptitle("The escape predicted from AdamW's linearised step (no fitted constant)", fontsize=9)
    fig.tight_layout()
    data = pd.concat(
        [
            escaped.assign(quantity="escape", measured=escaped.escape, predicted=escaped.predicted_escape),
            slopes.assign(quantity="slope", measured=slopes.measured_slope, predicted=slopes.predicted_slope),
        ],
        ignore_index=True,
    )
    return fig, data[["quantity", "p", "q", "seed", "mode_rate", "measured", "predicted", "factor"]]


def growth_figure(runs: dict, points: pd.DataFrame, point: int) -> tuple[plt.Figure, pd.DataFrame, pd.DataFrame]:
    """One panel per growth cell (``runs``: Cell -> growth/<cell>.csv): |projection| of theta_t -
    theta_point on the unstable mode (and on the loss' bottom eigenvector, and the norm in the
    canonical directions) against the learning rate spent since the point, log scale, one line style
    per seed; the predicted growth exp(rate S) through the fitted window's first checkpoint dashed;
    the test loss on the right axis. Returns the figure, its data and one row of rates per run."""
    panels = max(len(runs), 1)
    fig, axes = plt.subplots(1, panels, figsize=(max(4.6 * panels, 6.4), 4.1), squeeze=False)
    rows, rates = [], []
    for ax, (cell, frame) in zip(axes[0], runs.items()):
        loss_axis = ax.twinx()
        chain = cell.chain
        for seed, run in frame.groupby("seed"):
            own = points[np.isclose(points.p, chain.p) & np.isclose(points.q, chain.q) & (points.seed == seed)]
            own = own[(own.step == point) & (own.kind == "fixed")]
            predicted = float(own.mode_rate.iloc[0]) if len(own) else np.nan
            fitted, used = fitted_rate(run)
            rates.append(
                {"p": chain.p, "q": chain.q, "seed": int(seed), "predicted_rate": predicted, "fitted_rate": fitted,
                 "checkpoints_fitted": used, "factor": float(np.exp(abs(np.log(fitted / predicted))))
                 if fitted > 0 and predicted > 0 else np.nan}
            )  # fmt: skip
            run = run[run.step > run.step.min()]
            ax.plot(run.spent, run.projection_mode.abs(), lw=1, label=f"seed {seed}: mode")
            ax.plot(run.spent, run.projection_bottom.abs(), lw=0.8, ls=":", label=f"seed {seed}: loss' bottom")
            ax.plot(run.spent, run.canonical_norm, lw=0.8, ls="-.", label=f"seed {seed}: canonical")
            loss_axis.plot(run.spent, run.test_loss, color="0.6", lw=0.6)
            if np.isfinite(predicted) and predicted > 0:  # the predicted growth from the run's first speed
                first = run.iloc[0]
                slope = abs(first.projection_mode) / first.spent
                line = grown(run.spent - 0.0, slope, predicted)
                visible = line <= 10 * run.projection_mode.abs().max()
                ax.plot(run.spent[visible], line[visible], color="black", lw=0.8, ls="--", label="predicted rate")
            rows += [
                {"p": chain.p, "q": chain.q, "seed": int(seed), **r._asdict()}
                for r in run.drop(columns=["seed"]).itertuples(index=False)
            ]
        ax.set_yscale("log")
        ax.set_xlabel("learning rate spent since the point, sum of eta_t")
        ax.set_ylabel("|projection of theta_t - theta_point|")
        loss_axis.set_ylabel("test loss (grey)")
        loss_axis.tick_params(labelsize=6)
        ax.set_title(f"({chain.p:g}, {chain.q:g})", fontsize=8)
        ax.legend(fontsize=5, loc="upper left")
    fig.suptitle(
        f"The instability seen growing from iteration {point}:\n"
        "projection on AdamW's unstable mode (dashed: the predicted rate)",
        fontsize=9,
    )
    fig.tight_layout()
    return (
        fig,
        pd.DataFrame(rows),
        pd.DataFrame(
            rates, columns=["p", "q", "seed", "predicted_rate", "fitted_rate", "checkpoints_fitted", "factor"]
        ),
    )


def direction_bars(cells: pd.DataFrame, point: str, count: int = 8) -> tuple[plt.Figure, pd.DataFrame]:
    """The bottom eigenvector's share per parameter block (median over seeds), for up to ``count``
    cells at ``point`` spread over the range of the held-out curvature, with its share in the canonical directions."""
    frame = cells[cells.point == point].sort_values("curvature").reset_index(drop=True)
    chosen = frame.iloc[np.unique(np.linspace(0, len(frame) - 1, min(count, len(frame))).round().astype(int))]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(chosen) + 1.6))
    left = np.zeros(len(chosen))
    labels = [
        f"({r.p:g}, {r.q:g}) {r.curvature * 1e3:.2f}e-3, canonical {r.canonical_weight:.2f}"
        for r in chosen.itertuples()
    ]
    colours = plt.get_cmap("tab10").colors
    rows = []
    for k, block in enumerate(BLOCKS):
        share = chosen[f"weight_{block}"].to_numpy()
        ax.barh(np.arange(len(chosen)), share, left=left, color=colours[k % 10], label=block)
        left += share
        rows += [
            {
                "p": r.p,
                "q": r.q,
                "point": point,
                "block": block,
                "share": s,
                "curvature": r.curvature,
                "canonical_weight": r.canonical_weight,
            }
            for r, s in zip(chosen.itertuples(), share)
        ]
    ax.set_yticks(np.arange(len(chosen)), labels, fontsize=6)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the bottom eigenvector's squared norm")
    ax.set_title(
        f"Where the lowest curvature lies, {point}\n((p, q), held-out curvature, share in the canonical directions)",
        fontsize=8,
    )
    ax.legend(fontsize=6, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


ESCAPE_PANELS = (
    ("sigma", "log(1/sigma)  (sigma in brackets)", "linear"),
    ("batch_size", "batch size (sequences)", "log"),
)


def _escape_x(sweep: str, values: pd.Series) -> np.ndarray:
    values = values.astype(float).to_numpy()
    return np.log(1 / values) if sweep == "sigma" else values


def _escape_panel(ax, runs: pd.DataFrame, sweep: str, colour, label: str, shift: float) -> list[dict]:
    """One cell's runs of one sweep: a point per seed (open at the horizon: never escaped) and the
    median over seeds per value as a line, drawn ``shift`` (a fraction of a tick's spacing) off
    the value so that cells do not hide each other; the rows of the figure's data (true values)."""
    runs = runs.assign(x=_escape_x(sweep, runs.value), plotted=escape_or_horizon(runs))
    medians = runs.groupby("x", sort=True).plotted.median()
    bounds = {x: median_escape(group)[1] for x, group in runs.groupby("x")}

    def drawn(x):
        return np.asarray(x) * 2.0**shift if sweep == "batch_size" else np.asarray(x) + shift * np.log(2)

    ax.plot(drawn(medians.index), medians.to_numpy(), color=colour, lw=1, label=label)
    escaped = runs.escaped.astype(bool)
    ax.scatter(drawn(runs.x[escaped]), runs.plotted[escaped], s=14, color=colour, alpha=0.8, lw=0)
    ax.scatter(drawn(runs.x[~escaped]), runs.plotted[~escaped], s=16, facecolors="none", edgecolors=colour, lw=0.8)
    return [
        {
            "sweep": sweep,
            "p": r.p,
            "q": r.q,
            "value": r.value,
            "x": r.x,
            "seed": int(r.seed),
            "escaped": bool(r.escaped),
            "escape_plotted": r.plotted,
            "median": float(medians.loc[r.x]),
            "median_bound": bounds[r.x],
            "horizon": int(r.horizon),
        }
        for r in runs.itertuples()
    ]


def escape_figure(escape: pd.DataFrame, factor: float) -> tuple[plt.Figure, pd.DataFrame]:
    """Left: the escape iteration against log(1/sigma), right: against the batch size (log x), per
    cell (colour, drawn slightly apart; the legend names what the cell's data support): a point per
    seed, the median over seeds as a line; a run that never escaped sits at the horizon as an open
    marker (a lower bound)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.9))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    verdicts = cell_tests(escape, factor).set_index(["p", "q"]).explanation
    horizon = int(escape.horizon.max())
    rows = []
    for ax, (sweep, xlabel, scale) in zip(axes, ESCAPE_PANELS):
        part = escape[escape.sweep == sweep]
        groups = list(part.groupby(["p", "q"], sort=False))
        for k, ((p, q), runs) in enumerate(groups):
            label = f"({p:g}, {q:g}): {verdicts.loc[(p, q)]}"
            shift = 0.05 * (k - (len(groups) - 1) / 2)
            rows += _escape_panel(ax, runs, sweep, colours[k % len(colours)], label, shift)
        values = sorted(part.value.unique())
        ax.set_xscale(scale)
        ax.set_xticks(_escape_x(sweep, pd.Series(values)), [_tick(sweep, v) for v in values], fontsize=6)
        ax.minorticks_off()
        ax.axhline(horizon, color="0.5", lw=0.8, ls=":")
        ax.set_ylim(0, horizon * 1.06)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("escape iteration")
    axes[0].set_title("init scale: a saddle escape grows like log(1/sigma)", fontsize=8)
    axes[1].set_title(f"batch noise: a saddle escape does not depend on it (5b: factor <= {factor:g})", fontsize=8)
    axes[0].legend(fontsize=6, title="cell (p, q): supports", title_fontsize=6, loc="lower right")
    fig.suptitle(
        "What decides the escape (points: seeds; lines: medians; open at the dotted horizon: never escaped)",
        fontsize=9,
    )
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def _tick(sweep: str, value) -> str:
    return f"{np.log(1 / value):.2f}\n({value:g})" if sweep == "sigma" else f"{value:g}"


__all__ = ["curvature_heatmaps", "direction_bars", "escape_figure", "escape_law_figure", "growth_figure"]
