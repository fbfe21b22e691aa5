"""The escape iteration against log(1/sigma) and against the batch size (figures/local_to_global/plateau_escape.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.plateau.plots import escape_figure
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
figure, data = escape_figure(pd.read_csv(snakemake.input.escape), snakemake.params.batch_factor)
save_figure(figure, snakemake.output.pdf, data)
