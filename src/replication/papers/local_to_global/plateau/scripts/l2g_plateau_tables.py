"""The plateau analysis' tables: points.csv, cells.csv, law.csv and fits.csv."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.plateau.analysis import join_runs, saddle_law, summarise

log = log_to(snakemake.log[0])
points = join_runs(
    pd.concat([pd.read_csv(path) for path in snakemake.input.spectra], ignore_index=True),
    pd.read_csv(snakemake.input.measures),
    snakemake.params.significance,
)
laws, fits = [], []
for point in dict.fromkeys(points.point):
    law, fit = saddle_law(points, snakemake.params.sigma, point)
    laws.append(law)
    fits.append(fit)
    log.info("saddle law at %s: %s", point, fit)
write_csv(points, snakemake.output.points)
write_csv(summarise(points), snakemake.output.cells)
write_csv(pd.concat(laws, ignore_index=True), snakemake.output.law)
write_csv(pd.DataFrame(fits), snakemake.output.fits)
