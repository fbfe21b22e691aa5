"""results/claims.csv and figures/claims.md from the registered claims tables; a smoke tree's report
marks the failures that hold in the committed report at the papers' settings (expected at smoke)."""

from pathlib import Path

from replication.claims_report import claims_markdown, merge_claims, read_claims, summary_line
from replication.io import log_to, write_csv, write_text
from replication.paths import PROJECT_ROOT

log = log_to(snakemake.log[0])
claims = merge_claims(snakemake.input.tables, complete=snakemake.params.complete)
given = snakemake.input.paper_report
paper_report = [given] if isinstance(given, str) else list(given)
paper_claims = (
    read_claims(paper_report[0], Path(paper_report[0]).relative_to(PROJECT_ROOT).as_posix()) if paper_report else None
)
log.info("%s", summary_line(claims, paper_claims))
write_csv(claims, snakemake.output.csv)
write_text(
    claims_markdown(
        claims,
        snakemake.params.settings,
        title=snakemake.params.title,
        data=snakemake.output.csv,
        paper_claims=paper_claims,
    ),
    snakemake.output.md,
)
