"""The claims table of Benign overfitting."""

from pathlib import Path

import numpy as np
import pandas as pd

from replication.claims import write_claims
from replication.io import log_to
from replication.papers.benign_overfitting.claims import all_claims

log = log_to(snakemake.log[0])
# trajectories/<panel>.npz -> panel
trajectories = {Path(path).stem: dict(np.load(path)) for path in snakemake.input.trajectories}
grid, selections = pd.read_csv(snakemake.input.grid), pd.read_csv(snakemake.input.selections)
claims = all_claims(grid, selections, trajectories, snakemake.params.claims)
frame = write_claims(claims, snakemake.output[0])
for row in frame.itertuples():
    log.info("%s %s: %s (%s)", "HOLDS" if row.holds else "FAILS", row.claim_id, row.measured, row.threshold)
