"""Measured basins of the 2-D and 3-D flows, claims 1-4 and the data behind Figs. 2, 5 and basins."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from helpers import basin_settings, shared_scope
from replication.papers.local_to_global.landscape import basins, canonical, flow_tables, plots, plots3d
from replication.papers.local_to_global.landscape.settings import Canonical3dFlowSettings
from replication.papers.local_to_global.markov import MarkovChain

SETTINGS = basin_settings(
    {"sigma": 1.0, "starts": 8, "sequences": 100, "length": 64, "z": 4.0},
    chains=[{"p": 0.1, "q": 0.1}, {"p": 0.9, "q": 0.9}],
    sigmas=[0.05, 1.0],
    n_starts=60,
    flow_time=300.0,
    rounds=4,
    grid={"points": 10, "extent": 2.9, "margin": 0.05},
    seed=3,
)
COLUMNS = ["model", "p", "q", "sigma", "n_starts", "fraction_local_min", "fraction_local_min_theory"]


@pytest.fixture(scope=shared_scope)
def measured():
    return basins.measure_basins(SETTINGS)


@pytest.fixture(scope=shared_scope)
def grid():
    return basins.grid_agreement(SETTINGS)


def test_basins_table_columns_and_values(measured):
    assert set(COLUMNS) <= set(measured.columns)
    assert len(measured) == 2 * len(SETTINGS.chains) * len(SETTINGS.sigmas)
    assert set(measured.model) == {"2d", "3d"}
    assert (measured.n_starts == SETTINGS.n_starts).all()
    fractions = measured[["fraction_local_min", "fraction_global_min", "fraction_other"]]
    np.testing.assert_allclose(fractions.sum(axis=1), 1.0)
    assert measured.fraction_other.max() == 0  # every flow settled on a minimum
    two_d = measured[measured.model == "2d"]
    assert (
        two_d.fraction_local_min_theory.notna().all()
        and measured[measured.model == "3d"].fraction_local_min_theory.isna().all()
    )
    # Start by start, the 2-D endpoints are the theorem's basins.
    assert (two_d.fraction_agreeing_with_theory == 1.0).all()
    assert (measured.max_energy_drift < 1e-8).all()
    assert (measured.max_endpoint_loss_error < 1e-8).all()


def test_small_initialisation_goes_local_only_when_p_plus_q_exceeds_one(measured):
    small = measured[measured.sigma == 0.05]
    np.testing.assert_array_equal(small.fraction_local_min, np.where(small.p + small.q > 1, 1.0, 0.0))
    large = measured[measured.sigma == 1.0]
    assert ((large.fraction_local_min > 0) & (large.fraction_local_min < 1)).all()  # both basins are hit


def test_basins_are_deterministic(measured):
    again = basins.measure_basins(dataclasses.replace(SETTINGS, sigmas=(1.0,), chains=SETTINGS.chains[1:]))
    pd.testing.assert_frame_equal(
        again.reset_index(drop=True), measured[(measured.sigma == 1.0) & (measured.p == 0.9)].reset_index(drop=True)
    )


def test_grid_and_claims_hold(measured, grid):
    assert (grid.agreeing == grid.n_starts).all() and (grid.n_starts > 50).all()
    claims = {c.claim_id: c for c in basins.landscape_claims(measured, grid, SETTINGS)}
    assert sorted(claims) == ["1", "2", "3", "4a", "4b"]
    assert all(c.holds for c in claims.values()), claims
    assert claims["1"].measured == 1.0 and claims["4a"].measured == 1.0 and claims["4b"].measured == 0.0


def test_claims_fail_when_the_data_disagree(measured, grid):
    flipped = measured.assign(fraction_local_min=1 - measured.fraction_local_min, max_energy_drift=1e-3)
    worse_grid = grid.assign(agreeing=grid.agreeing - 1)
    claims = {c.claim_id: c for c in basins.landscape_claims(flipped, worse_grid, SETTINGS)}
    assert not any(claims[k].holds for k in ("1", "2", "4a", "4b"))
    none_small = basins.landscape_claims(measured[measured.sigma > 0.1], grid, SETTINGS)
    assert not none_small[3].holds and np.isnan(none_small[3].measured)


def test_flow_endpoints_continue_unsettled_starts():
    chain = MarkovChain(0.9, 0.9)
    # Right next to the separatrix the flow lingers near the saddle: one short horizon is not enough.
    w = np.array([-0.5, -0.3])
    starts = np.column_stack([canonical.separatrix(w) * (1 - 1e-4), w])
    once = basins.flow_endpoints(chain, "2d", starts, 10.0, rounds=1)
    more = basins.flow_endpoints(chain, "2d", starts, 10.0, rounds=300)
    assert (once.endpoint == canonical.UNCONVERGED).any()
    assert (more.endpoint == canonical.LOCAL_MIN).all()


def test_basins_figure_data(measured):
    _, data = plots.basins_figure(measured)
    assert list(data.columns) == COLUMNS
    pd.testing.assert_frame_equal(data, measured[COLUMNS].reset_index(drop=True))


@pytest.mark.parametrize("zoomed, sigma, extent", [(False, 0.5, 2.0), (True, 0.05, 0.3)])
def test_attention_figure_data(zoomed, sigma, extent):
    settings = Canonical3dFlowSettings(SETTINGS.chains, sigma, extent, 20, 300.0, view=(20.0, -60.0), seed=2)
    rng = np.random.default_rng(2)
    flows = pd.concat(
        [flow_tables.canonical3d_flows(chain, 20, sigma, 300.0, rng, samples=40) for chain in SETTINGS.chains]
    )
    _, data = plots3d.canonical3d_landscape(flows, settings, zoomed)
    trajectories = data[data.layer == "trajectory"]
    assert trajectories.groupby("panel").id.nunique().tolist() == [20, 20]
    ends = flows[flows.t == flows.t.max()]
    if zoomed:  # near the origin: every flow leaves e = 0 for p+q<1 and falls onto it for p+q>1
        assert set(ends[ends.p == 0.1].endpoint) == {canonical.GLOBAL_MIN}
        assert set(ends[ends.p == 0.9].endpoint) == {canonical.LOCAL_MIN}
        assert {"a'", "b'"} <= set(data.panel)
    surface = data[data.layer == "global_min_surface"]
    assert np.all(np.abs(surface[["w", "a", "e"]].to_numpy()) <= extent)
    for panel, chain in zip("ab", SETTINGS.chains):
        rows = surface[surface.panel == panel]
        gap = rows.e**2 * (1 + rows.a * rows.e**2) * canonical.signed_square(rows.w)
        np.testing.assert_allclose(gap, chain.optimal_gap, rtol=1e-9)


def test_starting_grid_leaves_out_the_axes_and_the_saddles_flow_lines():
    """5 x 5 points on [-2, 2]^2: the axes go; so does every point within the margin of |e| = g(w)
    (g(-2) = 1.5685, g(-1) = 0.3917; no separatrix for w > 0)."""
    grid = basins.starting_grid(5, 2.0, 0.5)
    assert grid.shape == (14, 2)
    every = {(e, w) for e in (-2.0, -1.0, 1.0, 2.0) for w in (-2.0, -1.0, 1.0, 2.0)}
    assert set(map(tuple, grid)) == every - {(2.0, -2.0), (-2.0, -2.0)}  # |2 - g(-2)| = 0.43 < 0.5
    # a margin equal to a grid value excludes the points on it: only |e| = |w| = 2 stay, and
    # w = -2 is 0.43 < 1 from its separatrix
    assert set(map(tuple, basins.starting_grid(5, 2.0, 1.0))) == {(-2.0, 2.0), (2.0, 2.0)}
    # a point exactly a margin away from the flow line goes too, as on the axes
    exact = abs(2.0 - canonical.separatrix(-2.0))
    assert set(map(tuple, basins.starting_grid(5, 2.0, exact))) == every - {(2.0, -2.0), (-2.0, -2.0)}
