"""Exit non-zero, naming them, when figures differ from the references; either way the verdict in
one line beside the report (figures/diff/verdict.txt), which `make diff` prints."""

import sys
from pathlib import Path

import pandas as pd

from replication.diff import verdicts_against_reference
from replication.diff.verdict import VERDICT_FILE, verdict_line
from replication.io import log_to, write_text
from replication.paths import shown_path

log = log_to(snakemake.log[0])
summary = verdicts_against_reference(pd.read_csv(snakemake.input[0]))
failed = summary[~summary.passed]
report = Path(snakemake.input[0]).with_name("report.html")
for row in failed.itertuples():
    log.error("%s: %s: %s", row.status, row.key, row.message)
verdict = verdict_line(summary, snakemake.params.reference, shown_path(report))
write_text(verdict + "\n", report.with_name(VERDICT_FILE))
log.info("%s", verdict)
if len(failed):
    print(verdict)
    sys.exit(f"{len(failed)} of {len(summary)} figures differ from the references; see {report}")
write_text("".join(f"{key}\n" for key in summary.key), snakemake.output[0])
