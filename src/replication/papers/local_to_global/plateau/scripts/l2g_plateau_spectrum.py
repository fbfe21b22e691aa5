"""The Hessian at every plateau point of one cell (spectrum.csv)."""

import numpy as np
import pandas as pd
from tqdm import tqdm

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv
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
        "seed %d step %d: lambda_min %.3g (noise %.2g), held-out curvature %.3g (noise %.2g), %d products",
        row["seed"],
        row["step"],
        row["lambda_1"],
        row["noise"],
        row["curvature"],
        row["curvature_noise"],
        row["products"],
    )


spectra = cell_spectra(
    points,
    arrays,
    Cell.named(snakemake.wildcards.cell).chain,
    snakemake.params.context,
    snakemake.params.hessian,
    progress,
)
bar.close()
write_csv(spectra, snakemake.output[0])
