"""Fig. 1 data of Benign overfitting: hand-built token selections for the three scenarios."""

from replication.io import log_to, write_csv
from replication.papers.benign_overfitting.runs import fig1_selections

log = log_to(snakemake.log[0])
s = snakemake.params.settings
frame = fig1_selections(s.d, s.signal_norm, s.n, s.n_test, snakemake.params.model, s.scales, s.seed)
log.info("accuracy:\n%s", frame.groupby(["scenario", "split"]).correct.mean())
write_csv(frame, snakemake.output[0])
