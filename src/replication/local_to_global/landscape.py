"""Data behind the landscape figures: flows, fields and basins of the canonical model."""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import canonical
from .flow import integrate_flow
from .markov import MarkovChain


def fig1_flows(chain: MarkovChain, n: int, extent: float, flow_time: float, rng: np.random.Generator, samples: int = 200) -> pd.DataFrame:
    """``n`` gradient-flow trajectories from uniform starts in the window, sampled in log time."""
    starts = rng.uniform(-0.9 * extent, 0.9 * extent, size=(n, 2))
    times = np.concatenate([[0.0], np.geomspace(1e-3, flow_time, samples - 1)])
    t, path = integrate_flow(canonical.flow_gradient(chain), starts, flow_time, t_eval=times)
    e, w = path[..., 0], path[..., 1]
    endpoint = canonical.classify_endpoint(chain, e[-1], w[-1])
    predicted = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1])
    return pd.DataFrame(
        {
            "p": chain.p,
            "q": chain.q,
            "trajectory": np.tile(np.arange(n), len(t)),
            "t": np.repeat(t, n),
            "e": e.reshape(-1),
            "w": w.reshape(-1),
            "energy": canonical.energy(e, w).reshape(-1),
            "loss": canonical.loss(chain, e, w).reshape(-1),
            "endpoint": np.tile(endpoint, len(t)),
            "predicted_basin": np.tile(predicted, len(t)),
        }
    )
