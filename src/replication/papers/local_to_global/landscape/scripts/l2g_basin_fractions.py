"""Measure the basins of the 2-D and 3-D flows from Gaussian starts."""

from replication.io import log_to, write_csv
from replication.papers.local_to_global.landscape.basins import measure_basins

log = log_to(snakemake.log[0])
write_csv(measure_basins(snakemake.params.settings, log), snakemake.output[0])
