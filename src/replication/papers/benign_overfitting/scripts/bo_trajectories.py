"""The recorded training runs of Benign overfitting (Figs. 2, 3)."""

from replication.io import log_to, write_npz
from replication.papers.benign_overfitting.metrics import final_roles
from replication.papers.benign_overfitting.runs import trajectory

log = log_to(snakemake.log[0])
s = snakemake.params.settings
model = snakemake.params.model
for panel, path in zip(snakemake.params.panels, snakemake.output):
    run = s.runs[panel]
    traj = trajectory(run.d, run.signal_norm, s.seed, model, s.steps, s.record_every)
    roles = final_roles(traj)
    log.info(
        "%s: final argmax roles, clean %s, noisy %s",
        panel,
        roles[~traj["noisy"]].tolist(),
        roles[traj["noisy"]].tolist(),
    )
    write_npz(path, **traj)
