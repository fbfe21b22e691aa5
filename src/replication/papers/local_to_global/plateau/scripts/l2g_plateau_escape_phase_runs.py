"""Write the rows of an escape job whose runs are the phase grid's, from the grid's measures and the
cell's runs.csv (escape/<cell>/phase_<sweep>_<value>.csv)."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.plateau.escape import phase_grid_runs

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
runs = phase_grid_runs(
    settings,
    snakemake.wildcards.sweep,
    pd.read_csv(snakemake.input.measures),
    pd.read_csv(snakemake.input.costs),
    settings.seeds,
)
log.info("%d runs of the phase grid at %s", len(runs), settings.chain)
write_csv(runs, snakemake.output[0])
