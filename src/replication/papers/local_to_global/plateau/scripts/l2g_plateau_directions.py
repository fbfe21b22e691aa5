"""Where the lowest curvature lies, per parameter block (figures/local_to_global/plateau_directions.*)."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.plateau.plots import direction_bars
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
cells = pd.read_csv(snakemake.input.cells)
figure, data = direction_bars(cells, cells.point.iloc[0])
save_figure(figure, snakemake.output.pdf, data)
