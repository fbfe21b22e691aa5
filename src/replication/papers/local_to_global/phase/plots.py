"""Figures of the phase diagram: heatmaps over (p, q) per init, and the plateau length of every
run against the candidate explanations."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from replication.claims import cell_holds

from ..transformer.plots import INIT_LABELS
from .prediction import PredictionCheck, canonical_prediction, prediction_check

HEATMAP_PANELS = (
    ("median_plateau", "median plateau length (iterations)"),
    ("on_plateau_window", "fraction not escaped by {window}"),
    ("on_plateau_horizon", "fraction not escaped by {horizon}"),
)
# The step whose claim a panel outlines (phase.prediction.PREDICTION_CHECKS); the median has none.
PANEL_STEPS = {"on_plateau_window": "window", "on_plateau_horizon": "horizon"}


def grid_edges(values: np.ndarray) -> np.ndarray:
    middle = (values[1:] + values[:-1]) / 2
    first = values[0] - (middle[0] - values[0]) if len(values) > 1 else values[0] - 0.05
    last = values[-1] + (values[-1] - middle[-1]) if len(values) > 1 else values[-1] + 0.05
    return np.concatenate([[first], middle, [last]])


@dataclass(frozen=True)
class PQGrid:
    """The (p, q) cells of a heatmap: the grid's values, the cells' edges, a cell's box, the value
    matrix of a column and the axes' dressing."""

    ps: np.ndarray
    qs: np.ndarray

    @classmethod
    def of(cls, cells: pd.DataFrame) -> PQGrid:
        return cls(np.sort(cells.p.unique()), np.sort(cells.q.unique()))

    @property
    def p_edges(self) -> np.ndarray:
        return grid_edges(self.ps)

    @property
    def q_edges(self) -> np.ndarray:
        return grid_edges(self.qs)

    def box(self, p: float, q: float, **style) -> plt.Rectangle:
        p_edges, q_edges = self.p_edges, self.q_edges
        i, j = np.searchsorted(self.ps, p), np.searchsorted(self.qs, q)
        corner = (p_edges[i], q_edges[j])
        return plt.Rectangle(corner, p_edges[i + 1] - p_edges[i], q_edges[j + 1] - q_edges[j], **style)

    def values(self, rows: pd.DataFrame, column: str) -> np.ndarray:
        """``column`` of ``rows`` as a (q, p) matrix, NaN where no row is."""
        values = np.full((len(self.qs), len(self.ps)), np.nan)
        for row in rows.itertuples():
            values[np.searchsorted(self.qs, row.q), np.searchsorted(self.ps, row.p)] = getattr(row, column)
        return values

    def axes(self, ax, title: str) -> None:
        """The line p + q = 1, ticks at the grid's values, labels and the title of one heatmap."""
        ax.plot([0, 1], [1, 0], "--", color="black", lw=1.0)
        ax.set_xticks(self.ps, [f"{v:g}" for v in self.ps])
        ax.set_yticks(self.qs, [f"{v:g}" for v in self.qs])
        ax.set_xlim(self.p_edges[0], self.p_edges[-1])
        ax.set_ylim(self.q_edges[0], self.q_edges[-1])
        ax.set_aspect("equal")
        ax.grid(False)
        ax.set_xlabel("p = P(1|0)")
        ax.set_ylabel("q = P(0|1)")
        ax.set_title(title, fontsize=8)
        ax.tick_params(labelsize=6)


def phase_heatmaps(cells: pd.DataFrame, window: int, horizon: int) -> tuple[plt.Figure, pd.DataFrame]:
    """One row per init, one column per measure; each cell's value written in it, unresolvable
    cells hatched ("n/r": the gap is below the noise, no verdict), a median plateau length marked as
    a lower bound where most seeds never escaped (``median_label``), cells whose claim on the
    canonical prediction fails (most seeds contradict it: ``replication.claims.cell_holds``, the
    claims' rule) outlined in red; the line p + q = 1 dashed. The data carries per cell the claim
    a panel outlines by and its verdict (``claim``, ``claim_holds``)."""
    inits = list(dict.fromkeys(cells.init))
    grid = PQGrid.of(cells)

    fig, axes = plt.subplots(len(inits), 3, figsize=(12, 3.7 * len(inits)), squeeze=False)
    rows = []
    for r, init in enumerate(inits):
        frame = cells[cells.init == init]
        for c, (column, title) in enumerate(HEATMAP_PANELS):
            ax = axes[r, c]
            fraction = column != "median_plateau"
            shown = frame[frame.resolvable]  # unresolvable cells: grey and hatched below
            if not fraction:  # no length to colour where the loss had not come down to the plateau
                shown = shown.assign(median_plateau=shown.median_plateau.where(~still_falling(shown)))
            values = grid.values(shown, column)
            image = ax.pcolormesh(
                grid.p_edges,
                grid.q_edges,
                np.ma.masked_invalid(values),
                cmap="viridis",
                vmin=0,
                vmax=1 if fraction else horizon,
                shading="flat",
            )
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03).ax.tick_params(labelsize=6)
            for row in frame.itertuples():
                value = getattr(row, column)
                predicted = canonical_prediction(init, row.p, row.q)
                check, verdict = cell_verdict(row, init, column)
                if not row.resolvable:
                    ax.add_patch(grid.box(row.p, row.q, facecolor="0.85", edgecolor="0.55", hatch="///", lw=0))
                    label, ink = "n/r", "black"
                else:
                    # fractions of seeds as counts: "2/3" not escaped
                    label = f"{round(value * row.seeds)}/{row.seeds}" if fraction else median_label(row)
                    # dark ink on viridis' yellow and on an uncoloured cell
                    coloured = fraction or not still_falling(row)
                    ink = "black" if not coloured or value / (1 if fraction else horizon) > 0.6 else "white"
                    if verdict is False:
                        ax.add_patch(grid.box(row.p, row.q, fill=False, color="red", lw=1.5))
                ax.text(row.p, row.q, label, ha="center", va="center", fontsize=5.5, color=ink)
                rows.append(
                    {
                        "init": init,
                        "p": row.p,
                        "q": row.q,
                        "measure": column,
                        "value": value,
                        "label": label,
                        "resolvable": row.resolvable,
                        "predicted_on_plateau": predicted,
                        "claim": check.claim if check else None,
                        "claim_holds": verdict,
                    }
                )
            measure = title.format(window=window, horizon=horizon)
            grid.axes(ax, f"{INIT_LABELS.get(init, init)}: {measure}\n{_prediction(init)}")
    fig.suptitle(
        "Phase diagram: dashed p + q = 1; red: most seeds contradict the canonical model's prediction "
        "(plateau; entropy rate by the horizon); grey n/r: gap below the noise (no verdict)\n"
        "median plateau length: \u2265 where half the seeds or more never escaped (a lower bound); "
        f"'still falling': the loss had not yet come down to the plateau by step {horizon}",
        fontsize=9,
    )
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def still_falling(cells):
    """Cells (a cells.csv row or frame) whose median run never came down to the plateau: half the
    seeds or more never escaped and the median plateau length is 0 (its drop never ended)."""
    return (2 * cells.censored >= cells.seeds) & (cells.median_plateau == 0)


def median_label(row) -> str:
    """A cell's median plateau length as written in it: a lower bound where half the seeds or more
    never escaped (their plateau lasts at least to their last step), words where it never began."""
    if still_falling(row):
        return "still\nfalling"
    return f"\u2265{row.median_plateau:.0f}" if 2 * row.censored >= row.seeds else f"{row.median_plateau:.0f}"


def cell_verdict(row, init: str, column: str) -> tuple[PredictionCheck | None, bool | None]:
    """The check a heatmap panel of ``column`` outlines a cell (a cells.csv row) by, and the cell's
    verdict over its seeds by the claims' rule (None: no prediction there, or unresolvable)."""
    check = prediction_check(init, row.p, row.q, PANEL_STEPS[column]) if column in PANEL_STEPS else None
    return check, cell_holds(getattr(row, check.column)) if check and row.resolvable else None


def _prediction(init: str) -> str:
    """What the canonical model predicts for ``init`` above and below p + q = 1, in words."""
    texts = {True: "plateau", False: "entropy rate", None: "none"}
    above, below = (texts[canonical_prediction(init, p, q)] for p, q in ((0.9, 0.9), (0.1, 0.1)))
    return f"predicted: {above} above the line, {below} below"


SCATTER_PANELS = (
    ("switching_distance", "|p + q - 1|", "linear"),
    ("gap", "gap H(pi) - entropy rate (nats)", "log"),
    ("asymmetry", "|pi1 - 1/2|", "linear"),
)
SIDE_MARKERS = {"p+q>1": "o", "p+q<1": "s"}


def plateau_scatter(runs: pd.DataFrame, horizon: int) -> tuple[plt.Figure, pd.DataFrame]:
    """Plateau length of every run (one point per seed) against each candidate explanation; colour
    the init, marker the side of p + q = 1, hollow a run that never escaped (its plateau lasts at
    least the plotted length)."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
    colours = dict(zip(dict.fromkeys(runs.init), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for ax, (column, label, scale) in zip(axes, SCATTER_PANELS):
        for (init, side), group in runs.groupby(["init", "side"], sort=False):
            for censored, part in group.groupby("censored"):
                ax.scatter(
                    part[column],
                    part.plateau_length,
                    marker=SIDE_MARKERS[side],
                    s=14,
                    alpha=0.75,
                    facecolors="none" if censored else colours[init],
                    edgecolors=colours[init],
                    linewidths=0.8,
                    label=f"{INIT_LABELS.get(init, init)}, {side}" + (" (never escaped)" if censored else ""),
                )
        ax.set_xscale(scale)
        ax.set_xlabel(label)
        ax.axhline(horizon, color="0.5", lw=0.8, ls=":")
    axes[0].set_ylabel("plateau length (iterations)")
    handles, labels = axes[0].get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    fig.legend(unique.values(), unique.keys(), loc="lower center", ncol=4, fontsize=6, frameon=False)
    fig.suptitle("Plateau length of every run (dotted: the horizon)", fontsize=9)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    columns = ["init", "seed", "p", "q", "side", "switching_distance", "gap", "asymmetry", "plateau_length", "censored"]
    return fig, runs[columns].reset_index(drop=True)
