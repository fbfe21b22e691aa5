"""One shard of the Benign-overfitting grid: train its cells, one row per cell."""

from tqdm import tqdm

from replication.io import log_to, write_csv
from replication.papers.benign_overfitting.grid import run_cells

log = log_to(snakemake.log[0])
cells = [tuple(cell) for cell in snakemake.params.cells]
with tqdm(total=len(cells), desc="cells", mininterval=5) as progress:
    frame = run_cells(cells, snakemake.params.model, snakemake.params.steps, batch_cells=4, progress=progress)
log.info("\n%s", frame[["d", "signal_norm", "train_loss", "test_loss", "test_accuracy", "eq9_ratio"]])
write_csv(frame, snakemake.output[0])
