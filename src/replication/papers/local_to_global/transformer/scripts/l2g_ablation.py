"""Fig. 3 / Fig. 6 ablation: structure of W_V and W_1 per variant of the authors' settings."""

import numpy as np

from replication.io import log_to
from replication.papers.local_to_global.transformer.ablation import ablation_figure, ablation_table
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
results = {
    variant: dict(np.load(path)) for (variant, _, _), path in zip(snakemake.params.runs, snakemake.input.checkpoints)
}
table = ablation_table(results)
log.info("ablation:\n%s", table.to_string(index=False))
figure, data = ablation_figure(table)
save_figure(figure, snakemake.output.pdf, data)
