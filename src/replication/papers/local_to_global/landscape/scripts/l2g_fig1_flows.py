"""Integrate the gradient-flow trajectories overlaid on Fig. 1."""

from replication.io import log_to, write_csv
from replication.papers.local_to_global.landscape.flow_tables import fig1_flows, flows_for_chains

log = log_to(snakemake.log[0])
s = snakemake.params.settings
flows = flows_for_chains(s, lambda chain, rng: fig1_flows(chain, s.trajectories, s.extent, s.flow_time, rng), log)
write_csv(flows, snakemake.output[0])
