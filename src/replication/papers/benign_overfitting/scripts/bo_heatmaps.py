"""The heatmap figures of the Benign-overfitting grid (Figs. 4, 5, 6 and accuracy)."""

import pandas as pd

from replication.io import log_to
from replication.papers.benign_overfitting.plots import grid_figure
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
grid = pd.read_csv(snakemake.input.grid)
for name in snakemake.params.names:
    figure, data = grid_figure(grid, name)
    save_figure(figure, snakemake.output[f"{name}_pdf"], data)
