"""The phase diagram's measures: one row per run (measures.csv) and per (cell, init) (cells.csv)."""

import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.phase.cells import measure_runs, summarise_cells
from replication.papers.local_to_global.phase.settings import cell_chain

log = log_to(snakemake.log[0])
phase = snakemake.params.phase
cells = {
    cell_chain(cell): (pd.read_csv(evaluations), pd.read_csv(runs))
    for cell, evaluations, runs in zip(snakemake.params.cells, snakemake.input.evaluations, snakemake.input.runs)
}
runs = measure_runs(cells, phase)
summary = summarise_cells(runs, phase)
log.info(
    "%d runs in %d cells: %d of %d iterations run (%.0f%% of the horizon)",
    len(runs),
    len(cells),
    runs.steps_run.sum(),
    len(runs) * phase.horizon,
    100 * runs.steps_run.sum() / (len(runs) * phase.horizon),
)
write_csv(runs, snakemake.output.runs)
write_csv(summary, snakemake.output.cells)
