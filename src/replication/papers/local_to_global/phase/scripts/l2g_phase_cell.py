"""Train every (init, seed) of one phase-diagram cell: evaluations and runs (CSV), final weights (.npz)."""

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv, write_npz
from replication.papers.local_to_global.phase.training import train_cell

log = log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
evaluations, runs, final = train_cell(snakemake.params.settings, snakemake.params.stop, snakemake.params.smooth)
for run in runs.itertuples():
    log.info("%s seed %d: %d of %d steps, %.1f CPU-s", run.init, run.seed, run.steps_run, run.horizon, run.cpu_s)
write_npz(snakemake.output.final, **final)
write_csv(evaluations, snakemake.output.evaluations)
write_csv(runs, snakemake.output.runs)
