"""figures/plateau_findings.md: the plateau analysis' findings in words, from its tables."""

import pandas as pd

from replication.io import log_to, write_text
from replication.papers.local_to_global.plateau.findings import findings

log = log_to(snakemake.log[0])
write_text(
    findings(pd.read_csv(snakemake.input.cells), pd.read_csv(snakemake.input.fits), snakemake.params.significance),
    snakemake.output[0],
)
