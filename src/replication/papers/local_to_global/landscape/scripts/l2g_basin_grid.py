"""Integrate 2-D flows from a grid of starts and compare their endpoints with Thms 2/8."""

from replication.io import log_to, write_csv
from replication.papers.local_to_global.landscape.basins import grid_agreement

log = log_to(snakemake.log[0])
grid = grid_agreement(snakemake.params.settings)
log.info("agreement:\n%s", grid.to_string(index=False))
write_csv(grid, snakemake.output[0])
