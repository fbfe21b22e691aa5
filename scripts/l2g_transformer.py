"""Train one (experiment, init, seed) run: per-step losses (CSV) and parameter checkpoints (.npz)."""

import torch

from replication.io import log_to, write_csv, write_npz
from replication.local_to_global.markov import MarkovChain
from replication.local_to_global.train import train

log = log_to(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
settings = snakemake.params.settings
run = snakemake.params.run
log.info("run %s: %s", run, {k: settings[k] for k in ("steps", "eval_every", "checkpoints", "device")})
result = train(
    MarkovChain(**settings["chain"]), snakemake.wildcards.init, int(snakemake.wildcards.seed), settings, name=run
)
final = result.losses.dropna(subset=["test_loss"]).iloc[-1]
log.info("run %s: final test loss %.4f at step %d", run, final.test_loss, final.step)
write_npz(snakemake.output.checkpoints, **result.checkpoints)
write_csv(result.losses, snakemake.output.losses)
