"""Exit non-zero, naming them, when figures differ from the references."""

import sys
from pathlib import Path

import pandas as pd

from replication.diff import verdicts_against_reference
from replication.io import log_to, write_text

log = log_to(snakemake.log[0])
summary = verdicts_against_reference(pd.read_csv(snakemake.input[0]))
failed = summary[~summary.passed]
report = Path(snakemake.input[0]).with_name("report.html")
for row in failed.itertuples():
    print(f"{row.status}: {row.key}: {row.message}")
    log.error("%s: %s: %s", row.status, row.key, row.message)
if len(failed):
    message = f"{len(failed)} of {len(summary)} figures differ from the references; see {report}"
    print(message)
    sys.exit(message)
write_text("".join(f"{key}\n" for key in summary.key), snakemake.output[0])
