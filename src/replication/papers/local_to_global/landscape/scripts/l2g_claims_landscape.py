"""Claims 1-4 of Local to Global from the basin runs and the grid of 2-D starts; claim 3 measured
on sampled sequences (the closed-form row stays as documentation)."""

import pandas as pd

from replication.claims import write_claims
from replication.io import log_to, write_csv
from replication.papers.local_to_global.landscape.basins import landscape_claims
from replication.papers.local_to_global.landscape.endpoint_loss import (
    reclassify,
    sampled_endpoint_losses,
    sampled_loss_claim,
)

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
claims = landscape_claims(pd.read_csv(snakemake.input.basins), pd.read_csv(snakemake.input.grid), settings)
claims = reclassify(claims, settings.claims.small_sigma)
sampled = sampled_endpoint_losses(settings)
log.info("sampled endpoint losses:\n%s", sampled.to_string(index=False))
write_csv(sampled, snakemake.output.sampled)
claims.append(sampled_loss_claim(sampled, settings.claims.sampled.z))
for claim in claims:
    log.info(
        "%s %s [%s]: %s (%s) %s",
        "HOLDS" if claim.holds else "FAILS",
        claim.claim_id,
        claim.kind,
        claim.measured,
        claim.threshold,
        claim.reason,
    )
write_claims(claims, snakemake.output[0])
