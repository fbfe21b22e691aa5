"""Figs. 3 and 6: heatmaps of W_V and W_1 at the checkpoints (first seed), and the low-rank
structure of every seed's run."""

import numpy as np
import pandas as pd

from replication.io import log_to, write_csv
from replication.local_to_global.structure import structure_table
from replication.local_to_global.transformer_plots import heatmaps
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
tables = []
for (_init, seed), path in zip(snakemake.params.runs, snakemake.input.checkpoints):
    checkpoints = dict(np.load(path))
    table = structure_table(checkpoints, matrices=("W_1", "W_V", "W_Q", "W_K", "W_O", "W_2"))
    tables.append(table.assign(seed=seed))
    if not len(tables) > 1:
        first, first_table = checkpoints, table
structure = pd.concat(tables, ignore_index=True)
log.info("structure:\n%s", structure.to_string(index=False))
figure, data = heatmaps(first, first_table[first_table.matrix.isin(["W_1", "W_V"])].reset_index(drop=True))
save_figure(figure, snakemake.output.pdf, data)
write_csv(structure, snakemake.output.structure)
