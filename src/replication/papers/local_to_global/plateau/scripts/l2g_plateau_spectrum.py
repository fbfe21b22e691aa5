"""The Hessian at every plateau point of one cell (spectrum.csv)."""

import numpy as np
import pandas as pd
from tqdm import tqdm

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv, write_npz
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.plateau.spectrum import cell_spectra

log = log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
points = pd.read_csv(snakemake.input.points)
with np.load(snakemake.input.parameters) as archive:
    arrays = dict(archive)
bar = tqdm(total=len(points), desc=snakemake.wildcards.cell, mininterval=2.0)


def progress(row):
    bar.update()
    log.info(
        "seed %d step %d: %s (lambda_min %.3g, held-out %.3g +- %.2g, tol %.2g), AdamW's mode %s (%s), "
        "%d held-out batches, %d products",
        row["seed"],
        row["step"],
        row["verdict"],
        row["lambda_min"],
        row["curvature"],
        row["curvature_noise"],
        row["tol"],
        row.get("mode_verdict", "not measured"),
        f"{row['mode_curvature']:.3g} +- {row['mode_curvature_noise']:.2g}" if "mode_curvature" in row else "",
        row["held_out_batches"],
        row["products"],
    )


spectra, directions = cell_spectra(
    points,
    arrays,
    Cell.named(snakemake.wildcards.cell).chain,
    snakemake.params.settings,
    snakemake.params.hessian,
    progress,
)
bar.close()
write_npz(snakemake.output.directions, **directions)
write_csv(spectra, snakemake.output.spectrum)
