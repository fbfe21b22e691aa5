"""Fig. 1 of the example paper: y(t) = exp(-k t) and its tidy data."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from replication.io import log_to
from replication.papers.exponential_decay.model import decay
from replication.plotting import apply_style, save_figure

settings = snakemake.params.settings
log = log_to(snakemake.log[0])
apply_style()
t = np.linspace(0.0, settings["horizon"], settings["points"])
data = pd.DataFrame({"t": t, "y": decay(t, settings["rate"])})
figure, axes = plt.subplots(figsize=(3.5, 2.5))
axes.plot(data.t, data.y)
axes.set(xlabel="t", ylabel="y", title=f"exp(-{settings['rate']} t)")
save_figure(figure, snakemake.output.pdf, data)
log.info("%d points", len(data))
