"""Claims 5 and 6 of spec §5 from the data behind Figs. 3, 4 and 6."""
import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.local_to_global.markov import MarkovChain
from replication.local_to_global.transformer_claims import transformer_claims

log = log_to(snakemake.log[0])
claims = transformer_claims(
    fig4=pd.read_csv(snakemake.input.fig4),
    fig3=pd.read_csv(snakemake.input.fig3),
    fig6=pd.read_csv(snakemake.input.fig6),
    chain=MarkovChain(**snakemake.params.chain),
    settings=snakemake.params.settings,
)
for claim in claims:
    log.info("%s holds=%s measured=%.4g (%s)", claim.claim_id, claim.holds, claim.measured, claim.reason)
write_claims(claims, snakemake.output[0])
