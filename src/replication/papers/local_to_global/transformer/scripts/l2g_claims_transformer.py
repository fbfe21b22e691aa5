"""Claims of the transformer experiments (Figs. 3, 4, 6) from their data and the ablations."""

import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.papers.local_to_global.transformer.claims import transformer_claims

log = log_to(snakemake.log[0])
claims = transformer_claims(
    fig4=pd.read_csv(snakemake.input.fig4),
    fig3=pd.read_csv(snakemake.input.fig3),
    fig6=pd.read_csv(snakemake.input.fig6),
    chain=snakemake.params.chain,
    fig3_chain=snakemake.params.fig3_chain,
    settings=snakemake.params.settings,
    ablation3=pd.read_csv(snakemake.input.ablation3),
    ablation6=pd.read_csv(snakemake.input.ablation6),
)
for claim in claims:
    log.info(
        "%s [%s] holds=%s measured=%.4g over %d runs (%s)",
        claim.claim_id,
        claim.kind,
        claim.holds,
        claim.measured,
        claim.n_runs,
        claim.reason,
    )
write_claims(claims, snakemake.output[0])
