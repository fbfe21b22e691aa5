"""Figures of the plateau analysis: the lowest curvature over (p, q) (full model and canonical
restriction), plateau length against the saddle law, where the bottom eigenvector lies, and the
escape iteration against the init's scale and the batch size."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import CenteredNorm

from replication.claims import cell_holds

from ..phase.plots import PQGrid
from .analysis import SADDLE
from .escape import cell_tests, escape_or_horizon, median_escape
from .hessian import BLOCKS

RESTRICTIONS = (("", "full model"), ("canonical_", "canonical directions"))


def curvature_heatmaps(cells: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """One row per point, one column per restriction: the median held-out curvature along the
    lowest eigenvector over seeds (the verdict's estimate of lambda_min, free of the fitted batches'
    bias) on a diverging map centred on 0, its value and the seeds that are saddles and minima
    written in the cell (``analysis.point_verdicts``), red where the claim fails, hatched where no
    seed is resolved (``not checkable``); the line p + q = 1 dashed."""
    points = list(dict.fromkeys(cells.point))
    grid = PQGrid.of(cells)
    scale = float(np.nanmax(np.abs(cells[["curvature", "canonical_curvature"]].to_numpy()))) or 1.0

    fig, axes = plt.subplots(len(points), 2, figsize=(8.4, 3.8 * len(points)), squeeze=False)
    rows = []
    for r, point in enumerate(points):
        frame = cells[cells.point == point]
        for c, (prefix, label) in enumerate(RESTRICTIONS):
            ax = axes[r, c]
            values = grid.values(frame, f"{prefix}curvature")
            image = ax.pcolormesh(
                grid.p_edges,
                grid.q_edges,
                np.ma.masked_invalid(values),
                cmap="RdBu_r",
                norm=CenteredNorm(0, scale),
                shading="flat",
            )
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03).ax.tick_params(labelsize=6)
            for row in frame.itertuples():
                value, noise = getattr(row, f"{prefix}curvature"), getattr(row, f"{prefix}curvature_noise")
                saddles, minima = getattr(row, f"{prefix}saddles"), getattr(row, f"{prefix}minima")
                told = saddles + minima
                # Hatched where the claim cannot be told (every seed unresolved); red where it fails (the
                # one verdict rule over the seeds that can be told): exactly the claims' verdicts.
                resolved = told > 0
                if not resolved:
                    ax.add_patch(grid.box(row.p, row.q, fill=False, hatch="///", edgecolor="0.45", lw=0))
                minimum = bool(resolved and cell_holds(minima / told))
                if resolved and not minimum:
                    ax.add_patch(grid.box(row.p, row.q, fill=False, color="red", lw=1.5))
                ink = "white" if abs(value) > 0.6 * scale else "black"  # light on the map's dark ends
                ax.text(
                    row.p,
                    row.q,
                    f"{value * 1e3:.2f}\n{saddles}s {minima}m/{row.seeds}",
                    ha="center",
                    va="center",
                    fontsize=5,
                    color=ink,
                )
                rows.append(
                    {
                        "point": point,
                        "restriction": label,
                        "p": row.p,
                        "q": row.q,
                        "curvature": value,
                        "curvature_noise": noise,
                        "lambda_min": getattr(row, f"{prefix}lambda_min"),
                        "resolved": resolved,
                        "saddles": saddles,
                        "minima": minima,
                        "seeds": row.seeds,
                        "local_minimum": minimum,
                    }
                )
            grid.axes(ax, f"{point}: lowest curvature, {label}")
    fig.suptitle(
        "Curvature at the plateau along the lowest eigenvector, on held-out batches (x 1e-3; seeds that are\n"
        "saddles (s) and minima (m), the rest unresolved; red: not a minimum; hatched: no seed resolved)",
        fontsize=9,
    )
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def saddle_law_figure(law: pd.DataFrame, fit: dict) -> tuple[plt.Figure, pd.DataFrame]:
    """Plateau length of every run that escaped a saddle against log(1/sigma) / |curvature|: the
    fitted half and the checked half, and the fitted law through the origin."""
    fig, ax = plt.subplots(figsize=(4.8, 3.8))
    for half, marker in (("fit", "o"), ("check", "s")):
        part = law[law.half == half]
        if len(part):
            ax.scatter(
                part.clock, part.plateau_length, marker=marker, s=16, alpha=0.8, label=f"{half} half ({len(part)} runs)"
            )
    if np.isfinite(fit.get("constant", np.nan)) and len(law):
        clock = np.linspace(0, law.clock.max() * 1.05, 50)
        ax.plot(clock, fit["constant"] * clock, color="black", lw=1, label=f"law: {fit['constant']:.3g} x clock")
        ax.fill_between(clock, fit["constant"] * clock / 2, 2 * fit["constant"] * clock, color="0.8", alpha=0.5, lw=0)
    ax.set_xlabel("log(1/sigma) / |curvature|")
    ax.set_ylabel("plateau length (iterations)")
    factor = fit.get("max_factor", np.nan)
    ax.set_title(
        f"Saddle law at {fit['point']} (grey: factor 2)\n"
        f"checked half: rank corr. {fit.get('rank_correlation', np.nan):.2f}, "
        f"largest factor {factor:.2f}",
        fontsize=8,
    )
    if len(law):
        ax.legend(fontsize=6)
    fig.tight_layout()
    columns = ["p", "q", "seed", "point", "lambda_1", "curvature", "clock", "plateau_length", "half", "prediction"]
    return fig, law[columns].reset_index(drop=True)


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


__all__ = ["SADDLE", "curvature_heatmaps", "direction_bars", "escape_figure", "saddle_law_figure"]
