"""The phase heatmaps say what a reader needs in the figure itself: counts of seeds per cell, the
canonical prediction per panel, red where the measured fate contradicts it, n/r where no verdict."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from replication.papers.local_to_global.phase.plots import phase_heatmaps


def cells_table() -> pd.DataFrame:
    """Standard init in four cells: above the line, escaped in 2 of 3 seeds by the horizon (contradicts
    the plateau) and in 1 of 3 (a majority agrees), below it at the entropy rate (agrees), and one
    unresolvable cell."""
    rows = []
    for p, q, window, horizon, resolvable in (
        (0.9, 0.9, 1.0, 1 / 3, True),
        (0.8, 0.9, 1.0, 2 / 3, True),
        (0.1, 0.1, 0.0, 0.0, True),
        (0.5, 0.6, 1.0, 1.0, False),
    ):
        rows.append(
            {
                "p": p,
                "q": q,
                "init": "standard",
                "seeds": 3,
                "median_plateau": 2000.0,
                "censored": round(3 * horizon),  # runs not escaped by the horizon: never escaped
                "on_plateau_window": window,
                "on_plateau_horizon": horizon,
                "reached": 1 - horizon,
                "resolvable": resolvable,
            }
        )
    return pd.DataFrame(rows)


def test_heatmap_labels_titles_and_outlines():
    figure, data = phase_heatmaps(cells_table(), window=600, horizon=3000)
    texts = {text.get_text() for ax in figure.axes for text in ax.texts}
    assert {"1/3", "3/3", "0/3", "2000", "\u22652000", "n/r"} <= texts
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert all("predicted: plateau above the line, entropy rate below" in title for title in titles)
    red = [
        patch
        for ax in figure.axes
        for patch in ax.patches
        if not patch.get_fill() and matplotlib.colors.same_color(patch.get_edgecolor(), "red")
    ]
    assert len(red) == 1  # (0.9, 0.9) at the horizon: 1 of 3 seeds still on the plateau, predicted all
    assert len(data) == 4 * 3 and set(data.predicted_on_plateau) == {True, False}
    verdicts = data.set_index(["p", "q", "measure"])
    assert verdicts.loc[(0.9, 0.9, "on_plateau_horizon")].claim_holds is False
    assert verdicts.loc[(0.8, 0.9, "on_plateau_horizon"), "claim_holds"] is True  # 2 of 3: a majority
    assert verdicts.loc[(0.1, 0.1, "on_plateau_horizon"), "claim"] == "5r"
    assert pd.isna(verdicts.loc[(0.1, 0.1, "on_plateau_window"), "claim"])  # no prediction for the window
    assert pd.isna(verdicts.loc[(0.5, 0.6, "on_plateau_horizon"), "claim_holds"])  # unresolvable: no verdict
    plt.close(figure)


def test_a_median_over_runs_that_never_escaped_says_so():
    """Half the seeds or more never escaped: the median is a lower bound (\u2265), or, where their
    loss never came down to the plateau (length 0), no length at all."""
    cells = cells_table().assign(censored=[3, 2, 1, 0], median_plateau=[3000.0, 0.0, 40.0, 0.0])
    figure, data = phase_heatmaps(cells, window=600, horizon=3000)
    medians = data[data.measure == "median_plateau"].set_index(["p", "q"]).label
    assert medians[(0.9, 0.9)] == "\u22653000"  # 3 of 3 never escaped
    assert medians[(0.8, 0.9)] == "still\nfalling"  # 2 of 3 never escaped, median length 0
    assert medians[(0.1, 0.1)] == "40"  # 1 of 3: the median is a length
    assert medians[(0.5, 0.6)] == "n/r"
    median_panel = figure.axes[0]
    coloured = median_panel.collections[0].get_array().compressed()
    assert sorted(coloured) == [40.0, 3000.0]  # the still-falling and the unresolvable cells: no colour
    plt.close(figure)
