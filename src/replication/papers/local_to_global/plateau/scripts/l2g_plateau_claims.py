"""Claims of the plateau analysis and of the escape sweeps (results/local_to_global/plateau/claims.csv)."""

import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.papers.local_to_global.plateau.claims import escape_claims, plateau_claims

log = log_to(snakemake.log[0])
summary = pd.read_csv(snakemake.input.fits).iloc[0].to_dict()
slopes = pd.read_csv(snakemake.input.slopes)
growth = pd.read_csv(snakemake.input.growth)
claims = plateau_claims(pd.read_csv(snakemake.input.points), snakemake.params.hessian, summary, slopes, growth)
claims += escape_claims(pd.read_csv(snakemake.input.escape), snakemake.params.escape)
for claim in claims:
    log.info("%s [%s] holds=%s over %d runs", claim.claim_id, claim.kind, claim.holds, claim.n_runs)
write_claims(claims, snakemake.output[0])
