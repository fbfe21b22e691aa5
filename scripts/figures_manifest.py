"""figures/all: one line per figure, table and the claims report (path, sha256, paper, figure);
figures/provenance.json: what made them."""

from replication.io import log_to
from replication.manifest import manifest_rows, write_manifest
from replication.provenance import collect, write_provenance

log = log_to(snakemake.log[0])
manifest = manifest_rows(snakemake.params.figures)
for row in manifest.itertuples():
    log.info("%s %s", row.sha256[:12], row.path)
write_manifest(manifest, snakemake.output.manifest)
provenance = collect(snakemake.params.config, snakemake.params.project_root)
log.info("provenance: %s", provenance)
write_provenance(provenance, snakemake.output.provenance)
