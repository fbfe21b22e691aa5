"""Merge the grid shards into results/benign_overfitting/grid.csv."""

import pandas as pd

from replication.io import log_to, write_csv

log = log_to(snakemake.log[0])
frame = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
frame = frame.sort_values(["d", "signal_norm", "seed"]).reset_index(drop=True)
log.info("%d runs from %d shards", len(frame), len(snakemake.input))
write_csv(frame, snakemake.output[0])
