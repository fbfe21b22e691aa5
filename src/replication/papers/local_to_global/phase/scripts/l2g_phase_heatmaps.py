"""Phase diagram heatmaps over (p, q), one row per init (figures/local_to_global/phase_heatmaps.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.phase.plots import phase_heatmaps
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
settings = snakemake.params.settings
figure, data = phase_heatmaps(pd.read_csv(snakemake.input.cells), settings.window, settings.horizon)
save_figure(figure, snakemake.output.pdf, data)
