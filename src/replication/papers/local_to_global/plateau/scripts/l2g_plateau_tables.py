"""The plateau analysis' tables: points.csv, cells.csv, and the escape predicted from AdamW's
linearised step against the measured one: law.csv (per escaping run), slopes.csv (per sweep cell
and seed) and fits.csv (the summary over runs)."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.plateau.adamw import learning_rates
from replication.papers.local_to_global.plateau.analysis import (
    escape_law,
    join_runs,
    law_summary,
    slope_law,
    summarise,
)

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
points = join_runs(
    pd.concat([pd.read_csv(path) for path in snakemake.input.spectra], ignore_index=True),
    pd.read_csv(snakemake.input.measures),
)
escape = pd.read_csv(snakemake.input.escape)
if "mode_rate" in points:
    rates = learning_rates(settings)
    law = escape_law(points, escape, rates, settings.sigma)
    slopes = slope_law(points, escape, rates, settings.sigma)
else:  # the optimiser's view switched off: nothing to predict
    law, slopes = pd.DataFrame(columns=["p", "q", "seed", "escaped", "factor"]), pd.DataFrame()
summary = law_summary(law)
log.info("escape predicted from AdamW's mode: %s", summary)
write_csv(points, snakemake.output.points)
write_csv(summarise(points), snakemake.output.cells)
write_csv(law, snakemake.output.law)
write_csv(slopes, snakemake.output.slopes)
write_csv(pd.DataFrame([summary]), snakemake.output.fits)
