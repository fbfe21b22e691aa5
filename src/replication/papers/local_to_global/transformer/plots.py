"""Figs. 3, 4 and 6: weight heatmaps across training, and test-loss curves by initialisation."""

from __future__ import annotations

import logging

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..markov import MarkovChain
from .structure import structure_table

MATRIX_LABELS = {"W_V": r"$W_V$", "W_1": r"$W_1$"}
INIT_LABELS = {"standard": "standard init", "ours": "our init", "rank_one": "rank-one init"}


def heatmaps(checkpoints: dict[str, np.ndarray], structure: pd.DataFrame, matrices=("W_V", "W_1")):
    """One row per matrix, one column per checkpoint; each panel with its own sequential colour scale.

    Returns the figure and the tidy entries it shows (matrix, step, row, col, value).
    """
    steps = [int(s) for s in checkpoints["step"]]
    fig, axes = plt.subplots(
        len(matrices),
        len(steps),
        figsize=(2.3 * len(steps), 2.6 * len(matrices)),
        squeeze=False,
        gridspec_kw={"height_ratios": [1.0 if m == "W_V" else 1.6 for m in matrices]},
    )
    frames = []
    for row, name in enumerate(matrices):
        for col, step in enumerate(steps):
            matrix = checkpoints[name][col]
            ax = axes[row, col]
            image = ax.imshow(matrix, cmap="Blues", aspect="auto", interpolation="nearest")
            fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03).ax.tick_params(labelsize=6)
            stats = structure[(structure.matrix == name) & (structure.step == step)].iloc[0]
            alignment = f"in {stats.cos_e_input:.2f}" + (
                f", out {stats.cos_e_output:.2f}" if np.isfinite(stats.cos_e_output) else ""
            )
            ax.set_title(
                f"{MATRIX_LABELS[name]}, step {step}\nshare {stats.top_share:.3f}; |cos e| {alignment}", fontsize=8
            )
            ax.grid(False)
            ax.tick_params(labelsize=6)
            rr, cc = np.indices(matrix.shape)
            frames.append(
                pd.DataFrame(
                    {"matrix": name, "step": step, "row": rr.ravel(), "col": cc.ravel(), "value": matrix.ravel()}
                )
            )
    fig.tight_layout()
    return fig, pd.concat(frames, ignore_index=True)


def smoothed_losses(losses: pd.DataFrame, smooth: int) -> pd.DataFrame:
    """Evaluated test losses per (init, seed) with a centred moving average of ``smooth`` evaluations."""
    tested = losses.dropna(subset=["test_loss"]).sort_values(["init", "seed", "step"]).copy()
    tested["test_loss_smoothed"] = tested.groupby(["init", "seed"]).test_loss.transform(
        lambda s: s.rolling(smooth, center=True, min_periods=1).mean()
    )
    return tested.reset_index(drop=True)


def loss_curves(losses: pd.DataFrame, chain: MarkovChain, window: int | None, smooth: int):
    """Mean +- std over seeds of the (smoothed) test loss per initialisation, with the two reference losses.

    ``losses`` has columns init, seed, step, test_loss. Returns the figure and its tidy data.
    """
    order = list(dict.fromkeys(losses.init))  # as in the config
    data = smoothed_losses(losses, smooth)
    if window is not None:
        data = data[data.step <= window].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    low, high = chain.bigram_loss, chain.unigram_loss
    pad = high - low
    # Our init starts far above (its loss at step 0 is ~20 nats): the axis keeps the two references readable.
    bottom, top = low - 0.6 * pad, high + 1.2 * pad
    above = []  # curves that never come down into the axis: named in a note, not in the legend
    for init in order:
        group = data[data.init == init]
        stats = group.groupby("step").test_loss_smoothed.agg(["mean", "std"]).fillna({"std": 0.0})
        label = f"{INIT_LABELS.get(init, init)} ({group.seed.nunique()} seeds)"
        shown = bool(stats["mean"].between(bottom, top).any())
        if not shown:
            above.append(f"{label}: loss {stats['mean'].min():.1f} to {stats['mean'].max():.1f}, above the axis")
        ax.plot(stats.index, stats["mean"], lw=1.2, label=label if shown else None)
        ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"], alpha=0.25)
    ax.axhline(chain.unigram_loss, color="0.2", ls="--", lw=1, label=f"unigram loss {chain.unigram_loss:.4f}")
    ax.axhline(chain.bigram_loss, color="tab:red", ls=":", lw=1.2, label=f"bigram loss {chain.bigram_loss:.4f}")
    if above:
        ax.text(0.02, 0.02, "\n".join(above), transform=ax.transAxes, fontsize=6, va="bottom", color="0.3")
    ax.set_ylim(bottom, top)
    ax.set_xlim(0, data.step.max())
    ax.set_xlabel("iteration")
    ax.set_ylabel("test loss (nats)")
    ax.set_title(f"p = {chain.p:g}, q = {chain.q:g}" + (f", smoothed over {smooth}" if smooth > 1 else ""))
    ax.legend(loc="upper right")
    fig.tight_layout()
    return fig, data


def structure_figure(runs: list[tuple[str, int]], checkpoint_paths: list[str]):
    """Figs. 3 and 6: heatmaps of W_V and W_1 at the checkpoints of the first seed's run, and the
    low-rank structure of every seed's run. Returns the figure, its tidy data and the structure table."""
    tables = []
    for (_init, seed), path in zip(runs, checkpoint_paths):
        checkpoints = dict(np.load(path))
        table = structure_table(checkpoints, matrices=("W_1", "W_V", "W_Q", "W_K", "W_O", "W_2"))
        tables.append(table.assign(seed=seed))
        if len(tables) == 1:
            first, first_table = checkpoints, table
    structure = pd.concat(tables, ignore_index=True)
    logging.getLogger("replication").info("structure:\n%s", structure.to_string(index=False))
    figure, data = heatmaps(first, first_table[first_table.matrix.isin(["W_1", "W_V"])].reset_index(drop=True))
    return figure, data, structure
