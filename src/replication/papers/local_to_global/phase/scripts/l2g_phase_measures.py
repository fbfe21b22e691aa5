"""The phase diagram's measures: one row per run (measures.csv, with the structure of its final
weights) and per (cell, init) (cells.csv)."""

import numpy as np
import pandas as pd

from replication.io import log_to, write_csv
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.measures import CellOutputs
from replication.papers.local_to_global.phase.tables import measure_runs, summarise_cells


def read_cell(evaluations: str, runs: str, final: str) -> CellOutputs:
    with np.load(final) as archive:
        return CellOutputs(pd.read_csv(evaluations), pd.read_csv(runs), dict(archive))


log = log_to(snakemake.log[0])
phase = snakemake.params.phase
files = zip(snakemake.input.evaluations, snakemake.input.runs, snakemake.input.final)
cells = {Cell.named(name): read_cell(*paths) for name, paths in zip(snakemake.params.cells, files)}
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
