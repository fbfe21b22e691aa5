"""Train one escape job's runs (one cell, one sweep value, every seed) as the phase grid trains its
runs, and write their measures with their CPU seconds (escape/<cell>/<sweep>_<value>.csv)."""

from replication.compute import prepare_training_job
from replication.io import log_to, write_csv
from replication.papers.local_to_global.phase.training import train_cell
from replication.papers.local_to_global.plateau.escape import sweep_runs

log = log_to(snakemake.log[0])
prepare_training_job(snakemake.threads)
settings, phase = snakemake.params.settings, snakemake.params.phase
outputs = train_cell(settings, phase.stop, phase.measures.smooth)
runs = sweep_runs(settings, snakemake.wildcards.sweep, outputs, phase)
for run in runs.itertuples():
    log.info(
        "%s %s seed %d: escaped %s at %s, %d of %d steps, %.1f CPU-s",
        run.sweep,
        run.value,
        run.seed,
        run.escaped,
        run.escape,
        run.steps_run,
        run.horizon,
        run.cpu_s,
    )
write_csv(runs, snakemake.output[0])
