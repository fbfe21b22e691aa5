"""figures/settings.yaml: the settings this tree's figures are made with (replication.variants)."""

from replication.io import log_to, write_text
from replication.variants import record_text

log = log_to(snakemake.log[0])
record = dict(snakemake.params.record)
log.info("settings %s (sha256 %s)", record["name"], record["sha256"])
write_text(record_text(record), snakemake.output[0])
