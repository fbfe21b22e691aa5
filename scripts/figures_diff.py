"""Regenerated figures against the reference set: images, summary.csv and report.html."""

import sys
from pathlib import Path

from replication.diff import diff_figures, verdicts_against_reference
from replication.io import log_to

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
try:
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
except FileNotFoundError as error:  # no reference set to compare with: one line, no traceback
    log.error("%s", error)
    sys.exit(f"Cannot diff: {error}")
for row in verdicts_against_reference(summary).itertuples():
    log.info("%s %s (margin %.3g, %s): %s", row.status, row.key, row.margin, row.worst, row.message)
