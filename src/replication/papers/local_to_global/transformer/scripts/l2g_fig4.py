"""Fig. 4 over the paper's window and over every step of the runs: test loss by initialisation."""

import pandas as pd

from replication.io import log_to
from replication.papers.local_to_global.transformer.plots import loss_curves
from replication.plotting import apply_style, save_figure

log = log_to(snakemake.log[0])
apply_style()
runs = [
    pd.read_csv(path).assign(init=init, seed=seed)
    for path, (init, seed) in zip(snakemake.input.losses, snakemake.params.runs)
]
losses = pd.concat(runs, ignore_index=True)[["init", "seed", "step", "train_loss", "test_loss"]]
chain = snakemake.params.chain
log.info("unigram loss H(pi) %.4f, bigram loss %.4f", chain.unigram_loss, chain.bigram_loss)
for window, pdf in ((snakemake.params.window, snakemake.output.pdf), (None, snakemake.output.long_pdf)):
    figure, data = loss_curves(losses, chain, window, snakemake.params.smooth)
    save_figure(figure, pdf, data)
