"""Heatmaps of the held-out curvature along the lowest Hessian eigenvector over (p, q)
(figures/local_to_global/plateau_curvature.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.plateau.plots import curvature_heatmaps
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
figure, data = curvature_heatmaps(pd.read_csv(snakemake.input.cells))
save_figure(figure, snakemake.output.pdf, data)
