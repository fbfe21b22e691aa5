"""Flows of the canonical model as tidy tables (Fig. 1 data), and the per-chain loop."""

import logging

import numpy as np
import pandas as pd

from replication.papers.local_to_global import canonical, landscape
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.settings import Fig1Settings


def test_fig1_flows_table():
    chain = MarkovChain(0.2, 0.3)
    rng = np.random.default_rng(5)
    frame = landscape.fig1_flows(chain, 6, 2.0, 200.0, rng, samples=30)
    starts = np.random.default_rng(5).uniform(-1.8, 1.8, size=(6, 2))
    assert list(frame.columns) == [
        "p",
        "q",
        "trajectory",
        "t",
        "e",
        "w",
        "energy",
        "loss",
        "endpoint",
        "predicted_basin",
    ]
    assert len(frame) == 6 * 30 and (frame.p == 0.2).all() and (frame.q == 0.3).all()
    times = np.concatenate([[0.0], np.geomspace(1e-3, 200.0, 29)])
    first = frame[frame.t == 0].sort_values("trajectory")
    assert np.allclose(first[["e", "w"]], starts) and list(first.trajectory) == list(range(6))
    for _trajectory, path in frame.groupby("trajectory"):
        assert np.allclose(path.t, times)
        assert np.allclose(path.energy, canonical.energy(path.e, path.w))
        assert np.ptp(path.energy) < 1e-6 * abs(path.energy.iloc[0])
        assert np.allclose(path.loss, canonical.loss(chain, path.e, path.w))
        assert np.all(np.diff(path.loss) <= 1e-12)
        assert path.endpoint.nunique() == 1 and path.predicted_basin.nunique() == 1
    ends = frame[frame.t == frame.t.max()].sort_values("trajectory")
    assert list(ends.endpoint) == list(canonical.classify_endpoint(chain, ends.e.to_numpy(), ends.w.to_numpy()))
    assert list(first.predicted_basin) == list(canonical.predicted_basin(chain, starts[:, 0], starts[:, 1]))
    # long enough for every flow to end where the theorem says
    assert list(ends.endpoint) == list(first.predicted_basin)


def test_flows_for_chains_share_one_seeded_stream(caplog):
    chains = (MarkovChain(0.1, 0.2), MarkovChain(0.7, 0.6))
    settings = Fig1Settings(
        chains, extent=3.0, contour_points=41, quiver_points=12, trajectories=3, flow_time=1.0, seed=3
    )
    seen = []

    def integrate(chain, rng):
        draw = rng.uniform()
        seen.append((chain, draw))
        return pd.DataFrame({"t": [0.0, 1.0, 1.0], "endpoint": ["x", "a", "b"], "p": chain.p})

    with caplog.at_level(logging.INFO, logger="test"):
        frame = landscape.flows_for_chains(settings, integrate, logging.getLogger("test"))
    expected = np.random.default_rng(3).uniform(size=2)
    assert [c for c, _ in seen] == [MarkovChain(0.1, 0.2), MarkovChain(0.7, 0.6)]
    assert np.allclose([d for _, d in seen], expected)
    assert list(frame.p) == [0.1] * 3 + [0.7] * 3 and list(frame.index) == list(range(6))
    assert [r.getMessage() for r in caplog.records] == [
        "p=0.1 q=0.2 endpoints: {'a': 1, 'b': 1}",
        "p=0.7 q=0.6 endpoints: {'a': 1, 'b': 1}",
    ]


def test_fig1_flows_sample_200_times_by_default():
    frame = landscape.fig1_flows(MarkovChain(0.9, 0.9), 2, 2.0, 5.0, np.random.default_rng(1))
    assert len(frame) == 2 * 200 and frame.t.nunique() == 200
