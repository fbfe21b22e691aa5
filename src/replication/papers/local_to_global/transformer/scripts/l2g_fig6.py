"""Fig. 6 of Local to Global: W_V and W_1 from the rank-one init, and every seed's low-rank structure."""

from replication.io import log_to, write_csv
from replication.papers.local_to_global.transformer.plots import structure_figure
from replication.plotting import apply_style, save_figure

log_to(snakemake.log[0])
apply_style()
figure, data, structure = structure_figure(snakemake.params.runs, snakemake.input.checkpoints)
save_figure(figure, snakemake.output.pdf, data)
write_csv(structure, snakemake.output.structure)
