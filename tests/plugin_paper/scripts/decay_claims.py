"""The claims of the example paper, measured on the data of Fig. 1."""

import numpy as np
import pandas as pd

from replication.claims import Claim, write_claims
from replication.io import log_to
from replication.papers.exponential_decay import PAPER
from replication.papers.exponential_decay.model import half_life_from_samples

log = log_to(snakemake.log[0])
rate = snakemake.params.settings["rate"]
data = pd.read_csv(snakemake.input.data)
measured_half_life = half_life_from_samples(data.t.to_numpy(), data.y.to_numpy())
at_one = float(np.interp(1.0, data.t, data.y))
claims = [
    Claim(
        PAPER.name,
        "1",
        "Fig. 1",
        "half-life from the sampled curve against ln 2 / k",
        measured_half_life,
        "|t_half - ln 2 / k| <= 1e-3",
        abs(measured_half_life - np.log(2) / rate) <= 1e-3,
        f"ln 2 / k = {np.log(2) / rate:.6g}",
        spec="ED-1",
    ),
    Claim(
        PAPER.name,
        "2",
        "Fig. 1",
        "y(1) from the sampled curve",
        at_one,
        "< 0.01",
        at_one < 0.01,
        f"k = {rate}",
        spec="ED-2",
    ),
]
write_claims(claims, snakemake.output[0])
log.info("%s", claims)
