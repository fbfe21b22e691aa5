"""Integrate the (e, w, a) gradient flows drawn in Fig. 2 or Fig. 5."""

from replication.io import log_to, write_csv
from replication.papers.local_to_global.landscape.flow_tables import canonical3d_flows, flows_for_chains

log = log_to(snakemake.log[0])
s = snakemake.params.settings
flows = flows_for_chains(s, lambda chain, rng: canonical3d_flows(chain, s.trajectories, s.sigma, s.flow_time, rng), log)
write_csv(flows, snakemake.output[0])
