"""Fig. 1 of Local to Global from the integrated flows."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.landscape.plots import fig1
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data = fig1(pd.read_csv(snakemake.input.flows), snakemake.params.settings)
save_figure(figure, snakemake.output.pdf, data)
