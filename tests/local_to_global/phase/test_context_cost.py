"""The summary of the context benchmark (``phase.context_cost``): per cell, init and size, the seeds'
escapes, their median (a lower bound, marked +, when half the seeds or more never escaped) and its
ratio to the first size's. The committed report is its runs' CSV summarised."""

import numpy as np
import pandas as pd

from helpers import ROOT
from replication.papers.local_to_global.phase.context_cost import COLUMNS, settings, summary

MEASUREMENTS = ROOT / "docs" / "measurements"


def test_the_committed_report_is_its_runs_summarised():
    rows = pd.read_csv(MEASUREMENTS / "phase_context.csv")[COLUMNS]
    table = summary(rows, settings()[1].horizon)
    assert table.to_markdown(index=False, disable_numparse=True) in (MEASUREMENTS / "phase_context.md").read_text()


def test_a_median_that_never_escaped_is_a_lower_bound():
    def run(context, seed, escape, closed):
        return dict(N=context, B=16, p=0.5, q=0.8, init="standard", seed=seed, steps=100, cpu_s=1.0,
                    ms_per_iter=10.0, escape=escape, final_closed=closed)  # fmt: skip

    rows = pd.DataFrame(
        [run(1024, 1, 400.0, 0.95), run(1024, 2, np.nan, 0.1), run(1024, 3, np.nan, 0.2)]
        + [run(256, seed, 200.0, 0.9) for seed in (1, 2, 3)],
        columns=COLUMNS,
    )
    table = summary(rows, horizon=3000).set_index("N x B")
    assert table.loc["1024 x 16", "escapes"] == "400, -, -"
    assert table.loc["1024 x 16", "median escape"] == "3000+" and table.loc["1024 x 16", "vs first"] == "1.00+"
    assert table.loc["256 x 16", "median escape"] == "200" and table.loc["256 x 16", "vs first"] == "0.07"
    assert table.loc["256 x 16", "final closed"] == "0.90, 0.90, 0.90"
    assert table.loc["1024 x 16", "ms / iteration"] == "10.0" and table.loc["256 x 16", "iterations"] == 300


def test_the_ratio_is_to_the_first_size_run_and_half_the_seeds_unescaped_is_a_bound():
    def run(context, batch, seed, escape, cell=(0.5, 0.8)):
        return dict(N=context, B=batch, p=cell[0], q=cell[1], init="standard", seed=seed, steps=100, cpu_s=1.0,
                    ms_per_iter=10.0, escape=escape, final_closed=0.5)  # fmt: skip

    sizes = {(1024, 16): (100.0, 200.0, np.nan), (512, 16): (50.0, np.nan, np.nan), (256, 16): (40.0, np.nan)}
    # Seed by seed over the sizes: the first row is the first size, the second row is not.
    rows = [
        run(n, b, seed, escapes[seed - 1])
        for seed in (1, 2, 3)
        for (n, b), escapes in sizes.items()
        if seed <= len(escapes)
    ]
    rows += [run(256, 64, seed, escape, cell=(0.3, 0.9)) for seed, escape in ((1, 10.0), (2, 20.0))]
    table = summary(pd.DataFrame(rows, columns=COLUMNS), horizon=3000).set_index(["cell", "N x B"])
    first = table.loc[("(0.5, 0.8)", "1024 x 16")]
    assert (first["median escape"], first["vs first"]) == ("200", "1.00")  # one of three never escaped: exact
    assert table.loc[("(0.5, 0.8)", "512 x 16"), "vs first"] == "15.00+"  # two of three: a lower bound
    assert table.loc[("(0.5, 0.8)", "256 x 16"), "median escape"] == "1520+"  # one of two: a bound too
    assert table.loc[("(0.3, 0.9)", "256 x 64"), "vs first"] == "1.00"  # a cell without the first size: itself
