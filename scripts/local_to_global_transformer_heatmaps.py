"""Figs. 3 and 6: heatmaps of W_V and W_1 at the checkpoints, and their low-rank structure."""
import numpy as np

from replication.io import log_to, write_csv
from replication.local_to_global.structure import structure_table
from replication.local_to_global.transformer_plots import heatmaps
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
checkpoints = dict(np.load(snakemake.input.checkpoints))
structure = structure_table(checkpoints)
log.info("structure:\n%s", structure.to_string(index=False))
figure, data = heatmaps(checkpoints, structure)
save_figure(figure, snakemake.output.pdf, data)
write_csv(structure, snakemake.output.structure)
