"""Retrain a figure's first run of Local to Global with one setting of the authors' code changed."""

from replication.papers.local_to_global.transformer.train import training_job

training_job(snakemake)
