"""The escape predicted from AdamW's linearised step against the measured one
(figures/local_to_global/plateau_law.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.plateau.plots import escape_law_figure
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
summary = pd.read_csv(snakemake.input.fits).iloc[0].to_dict()
figure, data = escape_law_figure(pd.read_csv(snakemake.input.law), pd.read_csv(snakemake.input.slopes), summary)
save_figure(figure, snakemake.output.pdf, data)
