"""Train one (experiment, init, seed) run of Local to Global: losses (CSV) and checkpoints (.npz)."""

from replication.papers.local_to_global.transformer.train import training_job

training_job(snakemake)
