"""Fig. 2 or Fig. 5 of Local to Global from the integrated (e, w, a) flows."""

import pandas as pd

from replication.io import log_to
from replication.local_to_global.plots import attention_landscape
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data = attention_landscape(
    pd.read_csv(snakemake.input.flows), snakemake.params.settings, snakemake.params.zoomed
)
save_figure(figure, snakemake.output.pdf, data)
