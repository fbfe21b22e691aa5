"""One growth cell's runs through the plateau, projected on the unstable mode at its fixed point
(results/local_to_global/plateau/growth/<cell>.csv)."""

import numpy as np
import pandas as pd

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv
from replication.papers.local_to_global.plateau.adamw import learning_rates
from replication.papers.local_to_global.plateau.growth import DIRECTIONS, growth_run, projections

log = log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
settings, growth, point = snakemake.params.settings, snakemake.params.growth, snakemake.params.point
points = pd.read_csv(snakemake.input.points)
with np.load(snakemake.input.directions) as archive:
    directions = dict(archive)
rates = learning_rates(settings)
frames = []
for seed in growth.seeds:
    row = points[(points.seed == seed) & (points.step == point) & (points.kind == "fixed")]
    if not len(row):
        log.info("seed %d: not on its plateau at %d; no growth run", seed, point)
        continue
    escape = float(row.escape.iloc[0])
    stop = settings.steps if not np.isfinite(escape) or escape < 0 else min(settings.steps, int(escape) + growth.after)
    result = growth_run(settings, seed, point, stop, growth.every)
    vectors = {name: directions[f"seed{seed}/step{point}/{name}"] for name in DIRECTIONS}
    frame = projections(result, vectors, rates).assign(seed=seed, escape=escape)
    log.info("seed %d: %d checkpoints to %d", seed, len(frame), stop)
    frames.append(frame)
columns = ["seed", "step", "spent", "test_loss", *[f"projection_{n}" for n in DIRECTIONS], "canonical_norm", "norm"]
write_csv(
    pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*columns, "escape"]), snakemake.output[0]
)
