"""Figs. 3a, 3b, 3c of Benign overfitting."""

import numpy as np

from replication.io import log_to
from replication.papers.benign_overfitting.plots import fig3
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
for panel, path in zip(snakemake.params.panels, snakemake.input.trajectories):
    figure, data = fig3(dict(np.load(path)), panel)
    log.info("3%s picked:\n%s", panel, data.drop_duplicates("row")[["row", "sample", "matched", "final_role"]])
    save_figure(figure, snakemake.output[f"fig3{panel}_pdf"], data)
