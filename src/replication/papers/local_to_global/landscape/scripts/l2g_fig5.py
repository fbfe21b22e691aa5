"""Fig. 5 of Local to Global: Fig. 2 near the origin, with |e| against the flow's time."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.landscape.plots3d import canonical3d_landscape
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data = canonical3d_landscape(pd.read_csv(snakemake.input.flows), snakemake.params.settings, zoomed=True)
save_figure(figure, snakemake.output.pdf, data)
