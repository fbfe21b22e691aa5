"""Fig. 2 of Benign overfitting, from the recorded run of Fig. 3a."""

import numpy as np

from replication.io import log_to
from replication.papers.benign_overfitting.plots import fig2
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data = fig2(dict(np.load(snakemake.input.trajectory)))
save_figure(figure, snakemake.output.pdf, data)
