"""Figures of Benign overfitting. Each function returns (figure, tidy data it plotted)."""

from __future__ import annotations

import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import Colormap, ListedColormap, Normalize, TwoSlopeNorm
from matplotlib.ticker import MaxNLocator

from .data import IRRELEVANT, RELEVANT, ROLE_NAMES, WEAK_ALIGNED, WEAK_OPPOSITE
from .metrics import final_roles, relevant_probability

CLASS_COLOURS = {1: "C0", -1: "C1"}
# Tick labels a heatmap panel (about 4 x 3.5 inches of cells) has room for along each axis.
MAX_X_LABELS, MAX_Y_LABELS = 10, 20
# Legend labels of the token roles (the paper's notation)
ROLE_LABELS = {
    RELEVANT: r"Relevant $\mathcal{R}$",
    WEAK_ALIGNED: r"Weakly relevant $\mathcal{W}_{Y^*}$",
    WEAK_OPPOSITE: r"Weakly relevant $\mathcal{W}_{-Y^*}$",
    IRRELEVANT: r"Irrelevant $\mathcal{I}$",
}
SCENARIO_TITLES = {
    "benign": "Benign overfitting",
    "harmful": "Harmful overfitting",
    "not_overfitting": "Not overfitting",
}


def fig1(frame: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Selected tokens along mu_{-1} (x) and mu_{+1} (y): train (squares) over test (circles)."""
    scenarios = list(dict.fromkeys(frame.scenario))
    fig, axes = plt.subplots(
        2, len(scenarios), figsize=(3.3 * len(scenarios), 5.6), sharex=True, sharey=True, squeeze=False
    )
    low = min(frame.x_minus.min(), frame.x_plus.min()) - 1
    high = max(frame.x_minus.max(), frame.x_plus.max()) + 1
    edge = np.array([low, high])
    for col, scenario in enumerate(scenarios):
        for row, split in enumerate(("train", "test")):
            ax = axes[row, col]
            part = frame[(frame.scenario == scenario) & (frame.split == split)]
            # The fixed head predicts +1 where x_plus > x_minus: shade its two half-planes
            ax.fill_between(edge, edge, high, color=CLASS_COLOURS[1], alpha=0.08, lw=0)
            ax.fill_between(edge, low, edge, color=CLASS_COLOURS[-1], alpha=0.08, lw=0)
            for label in (1, -1):
                points = part[part.label == label]
                style = (
                    dict(marker="s", color=CLASS_COLOURS[label], alpha=0.7, edgecolor="white", lw=0.4)
                    if split == "train"
                    else dict(marker="o", facecolor="none", edgecolor=CLASS_COLOURS[label])
                )
                ax.scatter(points.x_minus, points.x_plus, s=22, label=f"{split.capitalize()}: Y = {label:+d}", **style)
            ax.set(xlim=(low, high), ylim=(low, high))
            ax.legend(loc="upper right", frameon=True)
            ax.text(0.03, 0.03, f"accuracy {part.correct.mean():.2f}", transform=ax.transAxes, fontsize=8)
            if row == 0:
                ax.set_title(f"{SCENARIO_TITLES.get(scenario, scenario)} (c = {part.scale.iloc[0]:g})")
            if row == 1:
                ax.set_xlabel(r"$\mu_{-1}$-direction")
            if col == 0:
                ax.set_ylabel(r"$\mu_{+1}$-direction")
    fig.tight_layout()
    accuracy = frame.groupby(["scenario", "split"]).correct.transform("mean")
    return fig, frame.assign(accuracy=accuracy)


def fig2(traj: dict) -> tuple[plt.Figure, pd.DataFrame]:
    """S = r (1 - r) against r = s_R along a real run: clean samples go to r -> 1, noisy to r -> 0."""
    relevant = relevant_probability(traj)
    frame = pd.DataFrame(
        {
            "step": np.repeat(traj["steps"], relevant.shape[1]),
            "sample": np.tile(np.arange(relevant.shape[1]), len(traj["steps"])),
            "noisy": np.tile(traj["noisy"], len(traj["steps"])),
            "r": relevant.ravel(),
        }
    )
    frame["S"] = frame.r * (1 - frame.r)
    fig, (ax_r, ax_t) = plt.subplots(1, 2, figsize=(9, 3.6))
    grid = np.linspace(0, 1, 201)
    ax_r.plot(grid, grid * (1 - grid), color="0.8", lw=3, zorder=0, label="S = r (1 - r)")
    for noisy, colour, name in ((False, "C0", "clean"), (True, "C3", "noisy")):
        for k, (_sample, part) in enumerate(frame[frame.noisy == noisy].groupby("sample")):
            label = f"{name} samples" if k == 0 else None
            ax_r.plot(part.r, part.S, color=colour, lw=1, alpha=0.8, label=label)
            ax_r.plot(part.r.iloc[-1], part.S.iloc[-1], "o", color=colour, ms=3)
            ax_t.plot(part.step, part.S, color=colour, lw=1, alpha=0.8, label=label)
    ax_r.axvline(relevant[0, 0], color="0.5", ls=":", lw=1)
    ax_r.set(
        xlabel=r"$r = \sum_{t\in R} s_t$",
        ylabel=r"$S = r(1-r)$",
        xlim=(0, 1),
        ylim=(0, 0.26),
        title="S against the relevant-token probability",
    )
    ax_t.set(xlabel="step", ylabel=r"$S$", title="S over training")
    ax_r.legend(loc="upper right")
    ax_t.legend(loc="upper right")
    fig.suptitle(f"Fig. 2 from a real run: d = {int(traj['d'])}, ||mu|| = {float(traj['signal_norm']):g}")
    fig.tight_layout()
    return fig, frame


# Rows of Figs. 3a-c: (title, noisy?, roles the sample must end on)
FIG3_ROWS = {
    "a": [("Clean sample", False, (RELEVANT,)), ("Noisy sample", True, (WEAK_OPPOSITE,))],
    "b": [("Clean sample", False, (RELEVANT,)), ("Noisy sample", True, (IRRELEVANT,))],
    "c": [
        ("Clean sample", False, (RELEVANT,)),
        ("Noisy sample (fitted)", True, (WEAK_OPPOSITE,)),
        ("Noisy sample (not fitted)", True, (RELEVANT,)),
    ],
}


def pick_samples(traj: dict, rows: list) -> list[tuple[int, bool]]:
    """For each row, the sample of the wanted kind whose final argmax has a wanted role (the most
    confident such one); if none ends there, the one closest to it, flagged as unmatched."""
    final = traj["probabilities"][-1]
    ends = final_roles(traj)
    picks = []
    for _, noisy, wanted in rows:
        kind = traj["noisy"] == noisy
        role_probability = np.where(np.isin(traj["roles"], wanted), final, 0).max(-1)
        matched = kind & np.isin(ends, wanted)
        pool = matched if matched.any() else kind
        picks.append((int(np.argmax(np.where(pool, role_probability, -1))), bool(matched.any())))
    return picks


def fig3(traj: dict, panel: str) -> tuple[plt.Figure, pd.DataFrame]:
    """Softmax probability of every token against step, one row per picked training sample."""
    rows = FIG3_ROWS[panel]
    picks = pick_samples(traj, rows)
    fig, axes = plt.subplots(len(rows), 1, figsize=(4.2, 3.0 * len(rows)), sharex=True, squeeze=False)
    frames = []
    ends = final_roles(traj)
    for ax, (title, _, wanted), (sample, matched) in zip(axes[:, 0], rows, picks):
        for token in range(traj["roles"].shape[1]):
            role = traj["roles"][sample, token]
            ax.plot(
                traj["steps"],
                traj["probabilities"][:, sample, token],
                color=f"C{token % 10}",
                lw=1.3,
                label=ROLE_LABELS[role],
            )
        note = "" if matched else f"\n(none ends on {ROLE_NAMES[wanted[0]]})"
        ax.set(title=f"{title}{note}", ylabel="Softmax probability")
        frames.append(
            pd.DataFrame(
                {
                    "row": title,
                    "sample": sample,
                    "matched": matched,
                    "final_role": ROLE_NAMES[ends[sample]],
                    "step": np.repeat(traj["steps"], traj["roles"].shape[1]),
                    "token": np.tile(np.arange(traj["roles"].shape[1]), len(traj["steps"])),
                    "role": np.tile([ROLE_NAMES[r] for r in traj["roles"][sample]], len(traj["steps"])),
                    "probability": traj["probabilities"][:, sample, :].ravel(),
                }
            )
        )
    axes[0, 0].legend(loc="center right", fontsize=6)
    axes[-1, 0].set_xlabel("Time step")
    fig.suptitle(f"d = {int(traj['d'])}, ||mu|| = {float(traj['signal_norm']):g}")
    fig.tight_layout()
    return fig, pd.concat(frames, ignore_index=True)


def _pivot(grid: pd.DataFrame, column: str, statistic: str = "mean") -> pd.DataFrame:
    """d on rows (largest first, so 250 is at the bottom), ||mu|| on columns; ``statistic`` over seeds
    (``mean``, or ``std``: the sample standard deviation, NaN with one seed)."""
    table = grid.pivot_table(index="d", columns="signal_norm", values=column, aggfunc=statistic, dropna=False)
    table.columns = [f"{c:g}" for c in table.columns]
    return table.sort_index(ascending=False)


def panel_verdicts(verdicts: pd.DataFrame | None, column: str) -> pd.Series:
    """Per (d, signal_norm) cell: whether every claim on ``column`` holds there (``grid_claims.cell_verdicts``);
    cells no claim reads are absent."""
    if verdicts is None or not len(verdicts):
        return pd.Series(dtype=bool)
    on_panel = verdicts[verdicts.column == column]
    return on_panel.groupby(["d", "signal_norm"]).holds.all()


def _outline(ax, table: pd.DataFrame, verdicts: pd.Series) -> None:
    """Red boxes on the cells of the drawn ``table`` (d rows, ||mu|| columns) whose claims fail."""
    rows = {d: i for i, d in enumerate(table.index)}
    columns = {c: j for j, c in enumerate(table.columns)}
    for (d, norm), holds in verdicts.items():
        if not holds:
            corner = (columns[f"{norm:g}"], rows[d])
            ax.add_patch(plt.Rectangle(corner, 1, 1, fill=False, edgecolor="red", lw=1.5))


def centred_scale(values: np.ndarray, centre: float, cmap: str) -> tuple[Colormap, Normalize, list[float]]:
    """A diverging colour scale white at ``centre`` and the colour bar's ticks: with values on both
    sides each half of the bar spans one side (ticks on both halves, however short one side is in
    values); with values on one side only, the bar is that side's half of ``cmap``, from white."""
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    colours = plt.get_cmap(cmap)
    if low < centre < high:
        below = MaxNLocator(nbins=4, steps=[1, 2, 5, 10]).tick_values(low, centre)
        above = MaxNLocator(nbins=4, steps=[1, 2, 5, 10]).tick_values(centre, high)
        ticks = sorted({float(t) for t in (*below, *above) if low <= t <= high} | {centre})
        return colours, TwoSlopeNorm(vcenter=centre, vmin=low, vmax=high), ticks
    half = np.linspace(0.5, 1.0, 128) if low >= centre else np.linspace(0.0, 0.5, 128)
    vmin, vmax = (centre, max(high, centre + 1e-9)) if low >= centre else (min(low, centre - 1e-9), centre)
    return ListedColormap(colours(half)), Normalize(vmin=vmin, vmax=vmax), None


def heatmaps(
    grid: pd.DataFrame,
    panels: list[dict],
    suptitle: str | None = None,
    statistic: str = "mean",
    verdicts: pd.DataFrame | None = None,
) -> tuple[plt.Figure, pd.DataFrame]:
    """One heatmap per panel: {column, title, cmap, centre (optional: diverging around it)}; each cell
    shows ``statistic`` over the seeds of that (d, ||mu||). With ``verdicts`` (the claims' cells) a
    cell where a claim on the panel's column fails (in most of its seeds) is outlined in red, and
    the data carries that verdict per run as ``<column>_claims_hold`` (empty where no claim reads it)."""
    import seaborn as sns  # here only: importing it costs the other figures' jobs about a CPU-second

    seeds = grid.seed.nunique()
    over = f"{'mean' if statistic == 'mean' else 'std'} of {seeds} seed{'s' if seeds > 1 else ''}"
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    held = {}
    for ax, panel in zip(axes[0], panels):
        table = _pivot(grid, panel["column"], statistic)
        cmap, norm, ticks = panel.get("cmap", "viridis"), None, None
        if "centre" in panel:
            cmap, norm, ticks = centred_scale(table.values, panel["centre"], cmap)
        sns.heatmap(
            table,
            ax=ax,
            cmap=cmap,
            norm=norm,
            square=False,
            cbar_kws={"label": panel.get("label", panel["column"]), "ticks": ticks, "format": "%g"},
            # every cell labelled where the labels fit side by side, else every k-th
            xticklabels=math.ceil(table.shape[1] / MAX_X_LABELS),
            yticklabels=math.ceil(table.shape[0] / MAX_Y_LABELS),
        )
        ax.tick_params(axis="both", labelrotation=0)
        held[panel["column"]] = panel_verdicts(verdicts, panel["column"])
        _outline(ax, table, held[panel["column"]])
        outlined = " (red: a claim fails)" if len(held[panel["column"]]) else ""
        ax.set(title=f"{panel['title']}\n({over}){outlined}", xlabel=r"Signal norm $\|\mu\|_2$", ylabel="Dimension $d$")
    if suptitle:  # wrapped to the canvas: about 8 characters of the title's font per inch
        fig.suptitle(textwrap.fill(suptitle, width=int(8 * fig.get_figwidth())))
    fig.tight_layout()
    columns = ["d", "signal_norm", "seed"] + [panel["column"] for panel in panels]
    if statistic != "mean":
        spread = grid.groupby(["d", "signal_norm"])[columns[3:]].agg(statistic).reset_index()
        return fig, spread.assign(seeds=seeds).sort_values(["d", "signal_norm"]).reset_index(drop=True)
    data = grid[columns].sort_values(["d", "signal_norm", "seed"]).reset_index(drop=True)
    cells = pd.MultiIndex.from_frame(data[["d", "signal_norm"]])
    for column, verdict in held.items():
        if len(verdict):
            data[f"{column}_claims_hold"] = verdict.reindex(cells).to_numpy()
    return fig, data


HEATMAPS = {
    "fig4": dict(
        panels=[
            dict(
                column="eq9_ratio",
                centre=1.0,
                cmap="coolwarm",
                title="Eq. 9: LHS / RHS, as defined",
                label="ratio (white at 1; blue: < 1)",
            )
        ]
    ),
    "fig4_as_coded": dict(
        panels=[
            dict(
                column="eq9_ratio_as_coded", cmap="coolwarm", title="Eq. 9 ratio as coded (authors' v1)", label="ratio"
            )
        ],
        suptitle="As coded: one running sum over the log; ~ the smaller clean-class size",
    ),
    "fig5": dict(
        panels=[
            dict(column="train_loss", title="Train loss", label="loss"),
            dict(column="test_loss", title="Test loss", label="loss"),
        ]
    ),
    "fig6": dict(panels=[dict(column="eq10_ratio", title="Eq. 10 class balance, as defined", label="ratio")]),
    "fig6_as_coded": dict(
        panels=[dict(column="eq10_ratio_as_coded", title="Eq. 10 ratio as coded (authors' v1)", label="ratio")],
        suptitle="As coded, first logged step: ratio of the classes' mean sample index",
    ),
    "accuracy": dict(
        panels=[
            dict(column="train_accuracy", title="Train accuracy", label="accuracy"),
            dict(column="test_accuracy", title="Test accuracy", label="accuracy"),
        ]
    ),
    # Companion of the mean heatmaps: how much each cell moves from seed to seed.
    "seed_spread": dict(
        panels=[
            dict(column="eq9_ratio", title="Eq. 9 ratio", label="std over seeds"),
            dict(column="eq10_ratio", title="Eq. 10 ratio", label="std over seeds"),
            dict(column="test_loss", title="Test loss", label="std over seeds"),
            dict(column="test_accuracy", title="Test accuracy", label="std over seeds"),
        ],
        statistic="std",
    ),
}


def grid_figure(grid: pd.DataFrame, name: str, verdicts: pd.DataFrame | None = None) -> tuple[plt.Figure, pd.DataFrame]:
    """Heatmap ``name``; ``verdicts`` (``grid_claims.cell_verdicts``) outlines the cells whose claims
    fail on the mean heatmaps (the seed spread judges nothing)."""
    spec = HEATMAPS[name]
    statistic = spec.get("statistic", "mean")
    return heatmaps(grid, spec["panels"], spec.get("suptitle"), statistic, verdicts if statistic == "mean" else None)
