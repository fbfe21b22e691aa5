"""The heatmap figures of the Benign-overfitting grid (Figs. 4, 5, 6 and accuracy)."""

import pandas as pd

from replication.io import log_to
from replication.papers.benign_overfitting.grid_claims import cell_verdicts
from replication.papers.benign_overfitting.plots import grid_figure
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
grid = pd.read_csv(snakemake.input.grid)
verdicts = cell_verdicts(grid, snakemake.params.claims)  # the claims' cells, outlined where they fail
for name in snakemake.params.names:
    figure, data = grid_figure(grid, name, verdicts)
    save_figure(figure, snakemake.output[f"{name}_pdf"], data)
