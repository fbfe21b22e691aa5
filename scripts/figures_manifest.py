"""figures/all: one line per figure, table, the claims report and the settings record (path, sha256,
paper, figure, and the name and sha256 of the settings that made them); figures/provenance.json."""

from replication.io import log_to
from replication.manifest import manifest_rows, write_manifest
from replication.provenance import collect, write_provenance

log = log_to(snakemake.log[0])
tree, settings = snakemake.params.tree, snakemake.params.settings
manifest = manifest_rows(snakemake.params.figures, tree)
manifest["settings"], manifest["settings_sha256"] = settings["name"], settings["sha256"]
for row in manifest.itertuples():
    log.info("%s %s", row.sha256[:12], row.path)
write_manifest(manifest, snakemake.output.manifest)
provenance = collect(snakemake.params.config, snakemake.params.project_root)
provenance.update({"settings": settings["name"], "settings_sha256": settings["sha256"]})
log.info("provenance: %s", provenance)
write_provenance(provenance, snakemake.output.provenance)
