"""The basins figure: fraction of starts ending at a local minimum against sigma."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.landscape.plots import basins_figure
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data = basins_figure(pd.read_csv(snakemake.input.basins))
save_figure(figure, snakemake.output.pdf, data)
