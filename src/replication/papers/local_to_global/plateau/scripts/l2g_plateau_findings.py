"""figures/plateau_findings.md: the plateau analysis' findings in words, from its tables."""

import pandas as pd

from replication.io import log_to, write_text
from replication.papers.local_to_global.plateau.findings import escape_findings, findings

log = log_to(snakemake.log[0])
text = findings(
    pd.read_csv(snakemake.input.cells),
    pd.read_csv(snakemake.input.points),
    pd.read_csv(snakemake.input.fits).iloc[0].to_dict(),
    pd.read_csv(snakemake.input.slopes),
    pd.read_csv(snakemake.input.growth),
    snakemake.params.significance,
)
text += "\n" + escape_findings(pd.read_csv(snakemake.input.escape), snakemake.params.batch_factor)
write_text(text, snakemake.output[0])
