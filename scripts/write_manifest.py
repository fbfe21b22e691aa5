"""figures/all: one line per figure, table and the claims report (path, sha256, paper, figure)."""
import hashlib

import pandas as pd

from replication.io import log_to, write_csv

log = log_to(snakemake.log[0])
rows = []
for record in snakemake.params.figures:
    digest = hashlib.sha256(open(record["path"], "rb").read()).hexdigest()
    rows.append({"path": record["path"], "sha256": digest, "paper": record["paper"], "figure": record["figure"]})
    log.info("%s %s", digest[:12], record["path"])
write_csv(pd.DataFrame(rows), snakemake.output[0], sep="\t")
