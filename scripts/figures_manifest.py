"""figures/all: one line per figure, table, the claims report and the settings record (path, sha256,
paper, figure, and the name and sha256 of the settings that made them); figures/provenance.json."""

import hashlib

import pandas as pd

from replication.io import log_to, write_csv
from replication.provenance import collect, write_provenance

log = log_to(snakemake.log[0])
tree, settings = snakemake.params.tree, snakemake.params.settings
rows = []
for record in snakemake.params.figures:
    digest = hashlib.sha256(open(tree + record["path"], "rb").read()).hexdigest()
    rows.append(
        {
            "path": record["path"],
            "sha256": digest,
            "paper": record["paper"],
            "figure": record["figure"],
            "settings": settings["name"],
            "settings_sha256": settings["sha256"],
        }
    )
    log.info("%s %s", digest[:12], record["path"])
write_csv(pd.DataFrame(rows), snakemake.output.manifest, sep="\t")
provenance = collect(snakemake.params.config, snakemake.params.project_root)
provenance.update({"settings": settings["name"], "settings_sha256": settings["sha256"]})
log.info("provenance: %s", provenance)
write_provenance(provenance, snakemake.output.provenance)
