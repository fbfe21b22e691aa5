"""figures/all: one line per figure, table and the claims report (path, sha256, paper, figure);
figures/provenance.json: what made them."""

import hashlib

import pandas as pd

from replication.io import log_to, write_csv
from replication.provenance import collect, write_provenance

log = log_to(snakemake.log[0])
rows = []
for record in snakemake.params.figures:
    digest = hashlib.sha256(open(record["path"], "rb").read()).hexdigest()
    rows.append({"path": record["path"], "sha256": digest, "paper": record["paper"], "figure": record["figure"]})
    log.info("%s %s", digest[:12], record["path"])
write_csv(pd.DataFrame(rows), snakemake.output.manifest, sep="\t")
provenance = collect(snakemake.params.config, snakemake.params.project_root)
log.info("provenance: %s", provenance)
write_provenance(provenance, snakemake.output.provenance)
