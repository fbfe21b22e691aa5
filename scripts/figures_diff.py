"""Regenerated figures against the reference set: images, summary.csv and report.html."""

from pathlib import Path

from replication.diff import diff_figures, figure_verdicts
from replication.io import log_to

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
summary = diff_figures(
    snakemake.params.figures,
    snakemake.params.reference_dir,
    Path(snakemake.output.report).parent,
    settings["image_rms"],
    settings["data"],
    settings["external_dir"],
    envelope_factor=settings["envelope_factor"],
    provenance=snakemake.input.provenance,
)
for row in figure_verdicts(summary).itertuples():
    log.info("%s %s (margin %.3g, %s): %s", row.status, row.key, row.margin, row.worst, row.message)
