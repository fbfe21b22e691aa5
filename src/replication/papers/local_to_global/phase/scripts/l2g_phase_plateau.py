"""Plateau length of every run against |p + q - 1|, the gap and |pi1 - 1/2| (phase_plateau.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.phase.plots import plateau_scatter
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
figure, data = plateau_scatter(pd.read_csv(snakemake.input.runs), snakemake.params.settings.horizon)
save_figure(figure, snakemake.output.pdf, data)
