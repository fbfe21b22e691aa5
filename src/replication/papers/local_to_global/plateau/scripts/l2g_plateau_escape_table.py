"""The escape sweeps' runs, every job's rows joined (results/local_to_global/plateau/escape.csv)."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.plateau.escape import cell_tests

log = log_to(snakemake.log[0])
escape = pd.concat([pd.read_csv(path) for path in snakemake.input.runs], ignore_index=True)
for row in cell_tests(escape, snakemake.params.batch_factor).itertuples():
    log.info("(%g, %g): %s", row.p, row.q, row.explanation)
write_csv(escape, snakemake.output[0])
