"""Claims of the phase diagram per (p, q) cell over seeds (results/local_to_global/phase/claims.csv),
from the measures alone."""

import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.papers.local_to_global.phase.claims import phase_claims

log = log_to(snakemake.log[0])
runs = pd.read_csv(snakemake.input.runs)
cells = pd.read_csv(snakemake.input.cells)
claims = phase_claims(runs, cells, snakemake.params.phase, snakemake.params.claims)
for claim in claims:
    log.info("%s [%s] holds=%s over %d runs", claim.claim_id, claim.kind, claim.holds, claim.n_runs)
write_claims(claims, snakemake.output[0])
