"""Integrate the (e, w, a) gradient flows drawn in Fig. 2 or Fig. 5."""
import numpy as np
import pandas as pd

from replication.io import log_to, write_csv
from replication.local_to_global.landscape import attention_flows
from replication.local_to_global.markov import MarkovChain

log = log_to(snakemake.log[0])
settings = snakemake.params.settings
rng = np.random.default_rng(settings["seed"])
frames = []
for spec in settings["chains"]:
    chain = MarkovChain(spec["p"], spec["q"])
    frame = attention_flows(chain, settings["trajectories"], settings["sigma"], settings["flow_time"], rng)
    ends = frame[frame.t == frame.t.max()]
    log.info("p=%s q=%s sigma=%s endpoints: %s", chain.p, chain.q, settings["sigma"], ends.endpoint.value_counts().to_dict())
    frames.append(frame)
write_csv(pd.concat(frames, ignore_index=True), snakemake.output[0])
