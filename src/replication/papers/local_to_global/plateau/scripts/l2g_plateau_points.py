"""Train one cell's standard-init runs again to their plateau points: points.csv and points.npz."""

import pandas as pd

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv, write_npz
from replication.papers.local_to_global.plateau.points import plateau_points, train_to_points

log = log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
settings = snakemake.params.settings
measures = pd.read_csv(snakemake.input.measures)
cell = measures[(measures.p == settings.chain.p) & (measures.q == settings.chain.q)]
points = plateau_points(cell, snakemake.params.plateau)
log.info("%d points: %s", len(points), points[["seed", "step", "kind", "on_plateau"]].to_dict("records"))
write_npz(snakemake.output.parameters, **train_to_points(settings, points))
write_csv(points, snakemake.output.points)
