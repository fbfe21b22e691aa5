"""Flows of the canonical model as tidy tables (Fig. 1 data), and the per-chain loop."""

import logging

import numpy as np
import pandas as pd

from replication.papers.local_to_global.landscape import canonical, flow_tables
from replication.papers.local_to_global.landscape.settings import Fig1Settings
from replication.papers.local_to_global.markov import MarkovChain


def test_fig1_flows_table():
    chain = MarkovChain(0.2, 0.3)
    rng = np.random.default_rng(5)
    frame = flow_tables.fig1_flows(chain, 6, 2.0, 200.0, rng, samples=30)
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
        frame = flow_tables.flows_for_chains(settings, integrate, logging.getLogger("test"))
    expected = np.random.default_rng(3).uniform(size=2)
    assert [c for c, _ in seen] == [MarkovChain(0.1, 0.2), MarkovChain(0.7, 0.6)]
    assert np.allclose([d for _, d in seen], expected)
    assert list(frame.p) == [0.1] * 3 + [0.7] * 3 and list(frame.index) == list(range(6))
    assert [r.getMessage() for r in caplog.records] == [
        "p=0.1 q=0.2 endpoints: {'a': 1, 'b': 1}",
        "p=0.7 q=0.6 endpoints: {'a': 1, 'b': 1}",
    ]


def test_fig1_flows_sample_200_times_by_default():
    frame = flow_tables.fig1_flows(MarkovChain(0.9, 0.9), 2, 2.0, 5.0, np.random.default_rng(1))
    assert len(frame) == 2 * 200 and frame.t.nunique() == 200


def test_attention_flows_table():
    """Flows of the (e, w, a) model from N(0, sigma^2 I_3) starts: the table's rows, its clock, the
    energy, loss and endpoint of each row, and the accuracy near the invariant plane e = 0."""
    from replication.papers.local_to_global.landscape import canonical3d

    chain = MarkovChain(0.9, 0.9)  # p + q > 1: small starts fall onto the local-minimum plane e = 0
    frame = flow_tables.canonical3d_flows(chain, 5, 0.05, 300.0, np.random.default_rng(4), samples=30)
    starts = 0.05 * np.random.default_rng(4).standard_normal((5, 3))
    columns = ["p", "q", "trajectory", "t", "e", "w", "a", "energy", "loss", "endpoint"]
    assert list(frame.columns) == columns and len(frame) == 5 * 30
    times = np.concatenate([[0.0], np.geomspace(1e-2, 300.0, 29)])
    first = frame[frame.t == 0].sort_values("trajectory")
    np.testing.assert_allclose(first[["e", "w", "a"]], starts, rtol=1e-15)
    for _, path in frame.groupby("trajectory"):
        np.testing.assert_allclose(path.t, times, rtol=1e-12)
        coordinates = path.e.to_numpy(), path.w.to_numpy(), path.a.to_numpy()
        np.testing.assert_array_equal(path.energy, canonical3d.energy(*coordinates))
        np.testing.assert_array_equal(path.loss, canonical3d.loss(chain, *coordinates))
        assert np.ptp(path.energy) < 1e-9 * max(1.0, abs(path.energy.iloc[0]))
        # e decays geometrically onto the plane e = 0, far below the solver's default absolute
        # tolerance (relative accuracy near the plane)
        assert abs(path.e.iloc[-1]) < 1e-20
    ends = frame[frame.t == frame.t.max()].sort_values("trajectory")
    final = ends.e.to_numpy(), ends.w.to_numpy(), ends.a.to_numpy()
    assert list(ends.endpoint) == list(canonical3d.classify_endpoint(chain, *final))
    assert set(ends.endpoint) == {canonical.LOCAL_MIN}


def test_endpoints_are_labelled_from_the_last_point_of_each_flow():
    """With three samples (0, the first step, the end) an earlier point would give other labels."""
    from replication.papers.local_to_global.landscape import canonical3d

    chain = MarkovChain(0.2, 0.3)
    flows = flow_tables.fig1_flows(chain, 6, 2.0, 200.0, np.random.default_rng(5), samples=3)
    ends = flows[flows.t == flows.t.max()]
    assert list(ends.endpoint) == list(canonical.classify_endpoint(chain, ends.e.to_numpy(), ends.w.to_numpy()))
    assert canonical.GLOBAL_MIN in set(ends.endpoint)
    flows = flow_tables.canonical3d_flows(chain, 6, 1.0, 300.0, np.random.default_rng(5), samples=3)
    ends = flows[flows.t == flows.t.max()]
    final = ends.e.to_numpy(), ends.w.to_numpy(), ends.a.to_numpy()
    assert list(ends.endpoint) == list(canonical3d.classify_endpoint(chain, *final))
    assert canonical.GLOBAL_MIN in set(ends.endpoint)


def test_attention_flows_sample_200_times_by_default_and_take_noise_members(monkeypatch):
    from replication.perturbation import VARIABLE

    chain = MarkovChain(0.9, 0.9)
    plain = flow_tables.canonical3d_flows(chain, 2, 0.5, 5.0, np.random.default_rng(1))
    assert len(plain) == 2 * 200 and plain.t.nunique() == 200
    monkeypatch.setenv(VARIABLE, "2")
    member = flow_tables.canonical3d_flows(chain, 2, 0.5, 5.0, np.random.default_rng(1))
    fig1 = flow_tables.fig1_flows(chain, 2, 2.0, 5.0, np.random.default_rng(1), samples=20)
    assert not np.array_equal(member.e, plain.e) and np.allclose(member.e, plain.e, rtol=1e-9)
    assert len(fig1) == 40


def test_attention_flows_use_the_explicit_solver_at_a_tiny_absolute_tolerance(monkeypatch):
    """The clocked field is not stiff: DOP853, with atol 1e-30 for relative accuracy near e = 0 and w = 0."""
    calls = []

    def integrate_flow(field, starts, t_end, t_eval, atol, method):
        calls.append((t_end, atol, method))
        return np.array(t_eval), np.repeat(starts[None], len(t_eval), axis=0)

    monkeypatch.setattr(flow_tables, "integrate_flow", integrate_flow)
    flow_tables.canonical3d_flows(MarkovChain(0.9, 0.9), 2, 0.5, 5.0, np.random.default_rng(1), samples=4)
    assert calls == [(5.0, 1e-30, "DOP853")]
