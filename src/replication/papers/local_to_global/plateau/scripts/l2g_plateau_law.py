"""Plateau length against the saddle law (figures/local_to_global/plateau_law.*), at the first point."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.plateau.plots import saddle_law_figure
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
fits = pd.read_csv(snakemake.input.fits)
law = pd.read_csv(snakemake.input.law)
fit = fits.iloc[0].to_dict()
figure, data = saddle_law_figure(law[law.point == fit["point"]], fit)
save_figure(figure, snakemake.output.pdf, data)
