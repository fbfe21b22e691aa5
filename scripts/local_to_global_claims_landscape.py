"""Claims 1-4 of Local to Global from the basin runs and the grid of 2-D starts."""
import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.local_to_global.basins import landscape_claims

log = log_to(snakemake.log[0])
claims = landscape_claims(pd.read_csv(snakemake.input.basins), pd.read_csv(snakemake.input.grid), snakemake.params.settings)
for claim in claims:
    log.info("%s %s: %s (%s) %s", "HOLDS" if claim.holds else "FAILS", claim.claim_id, claim.measured, claim.threshold, claim.reason)
write_claims(claims, snakemake.output[0])
