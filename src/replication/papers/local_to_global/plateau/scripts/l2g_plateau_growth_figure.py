"""The instability seen growing (figures/local_to_global/plateau_growth.*) and its rates table."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.plateau.plots import growth_figure
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
runs = {Cell.named(name): pd.read_csv(path) for name, path in zip(snakemake.params.cells, snakemake.input.runs)}
figure, data, rates = growth_figure(runs, pd.read_csv(snakemake.input.points), snakemake.params.point)
write_csv(rates, snakemake.output.rates)
save_figure(figure, snakemake.output.pdf, data)
