"""Train one (experiment, init, seed) run of Local to Global: losses (CSV) and checkpoints (.npz)."""

from replication.compute import prepare_training_job
from replication.io import log_to
from replication.papers.local_to_global.transformer.train import train_and_write

log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
train_and_write(
    snakemake.params.settings,
    snakemake.wildcards.init,
    int(snakemake.wildcards.seed),
    snakemake.params.run,
    snakemake.output.losses,
    snakemake.output.checkpoints,
)
