"""results/claims.csv and figures/claims.md from the registered claims tables."""

from replication.claims_report import claims_markdown, merge_claims, summary_line
from replication.io import log_to, write_csv, write_text

log = log_to(snakemake.log[0])
claims = merge_claims(snakemake.input.tables, complete=snakemake.params.complete)
log.info("%s", summary_line(claims))
write_csv(claims, snakemake.output.csv)
write_text(
    claims_markdown(claims, snakemake.params.settings, title=snakemake.params.title, data=snakemake.output.csv),
    snakemake.output.md,
)
