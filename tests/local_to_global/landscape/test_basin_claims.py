"""Claims 1-4 of the landscape (basins.landscape_claims) on hand-made tables: every field, values
on every threshold; and the progress log of the basin measurements."""

import logging
import math
import re

import numpy as np
import pandas as pd
import pytest

from helpers import basin_settings
from replication.papers.local_to_global import PAPER
from replication.papers.local_to_global.landscape import basins

SETTINGS = basin_settings(
    {"sigma": 1.0, "starts": 2, "sequences": 10, "length": 8, "z": 4.0},
    chains=[{"p": 0.9, "q": 0.9}],
    sigmas=[0.05],
    n_starts=3,
    flow_time=300.0,
    rounds=4,
    grid={"points": 4, "extent": 2.0, "margin": 0.05},
    seed=3,
)
BASINS = pd.DataFrame(
    [
        # model, p, q, sigma, n_starts, fraction_local_min, max_energy_drift, max_endpoint_loss_error
        ("2d", 0.9, 0.9, 0.05, 100, 1.0, 1e-10, 1e-9),
        ("3d", 0.9, 0.9, 0.05, 100, 0.99, 3e-9, 2e-9),  # on the threshold: holds
        ("2d", 0.9, 0.9, 0.1, 100, 0.995, 2e-10, 1e-9),  # sigma = small_sigma counts as small
        ("2d", 0.1, 0.1, 0.05, 100, 0.01, 2e-10, np.nan),  # no endpoint on a minimum: no error
        ("3d", 0.1, 0.1, 0.05, 100, 0.0, 5e-10, 4e-9),
        ("2d", 0.4, 0.6, 0.05, 100, 0.5, 1e-10, 1e-9),  # p + q = 1: neither side of claim 4
        ("2d", 0.9, 0.9, 1.0, 200, 0.6, 1e-8, 1e-6),  # a drift and an error exactly on their bounds
        ("3d", 0.1, 0.1, 1.0, 200, 0.3, 1e-9, 3e-9),
    ],
    columns=[
        "model",
        "p",
        "q",
        "sigma",
        "n_starts",
        "fraction_local_min",
        "max_energy_drift",
        "max_endpoint_loss_error",
    ],
)
GRID = pd.DataFrame(
    # the worst chain by fraction (90/200) is not the one with the fewest agreeing starts times starts
    [(0.9, 0.9, 200, 90, 1e-9, 1e-9), (0.1, 0.1, 80, 79, 2e-9, 5e-9)],
    columns=["p", "q", "n_starts", "agreeing", "max_energy_drift", "max_endpoint_loss_error"],
)


def _fields(claim):
    return (claim.paper, claim.claim_id, claim.figure, claim.statement, claim.threshold, claim.holds, claim.reason)


def test_claims_1_to_4_in_full():
    claims = basins.landscape_claims(BASINS, GRID, SETTINGS)
    paper = "Local to Global"
    assert [_fields(c) for c in claims] == [
        (
            paper,
            "1",
            "Fig. 1",
            "Gradient-flow endpoints from a grid of (e, w) starts match the basins of Thms 2/8.",
            "fraction agreeing = 1",
            False,
            "169/280 starts over 2 chains; worst p=0.9, q=0.9: 90/200",
        ),
        (
            paper,
            "2",
            "Figs. 1, 2",
            "Energy is constant along the gradient flow, 2-D and 3-D (relative to max(|E0|, 1)).",
            "max relative drift < 1e-08",
            False,  # a drift of exactly the bound is not below it
            "every basin start and grid start; 2-D 1.0e-08, 3-D 3.0e-09",
        ),
        (
            paper,
            "3",
            "Figs. 1, 2",
            "Endpoint losses: H(pi) at local minima, the entropy rate at global minima.",
            "max |loss - reference| < 1e-06",
            False,
            "every endpoint on a minimum, both models, every chain and sigma",
        ),
        (
            paper,
            "4a",
            "Figs. 2, 5",
            "p+q>1, starts N(0, sigma^2 I) with sigma <= 0.1: the flow ends at a local minimum.",
            "min fraction >= 0.99",
            True,
            "2-D and 3-D, sigma in {0.05, 0.1}, 3 runs of 200 starts",
        ),
        (
            paper,
            "4b",
            "Figs. 2, 5",
            "p+q<1, starts N(0, sigma^2 I) with sigma <= 0.1: the flow avoids local minima.",
            "max fraction <= 0.01",
            True,
            "2-D and 3-D, sigma in {0.05, 0.1}, 2 runs of 200 starts",
        ),
    ]
    measured = [c.measured for c in claims]
    assert measured[0] == 169 / 280 and measured[1:] == [1e-8, 1e-6, 0.99, 0.01]
    assert all(c.kind == "checked" for c in claims)


def test_each_claim_names_the_spec_claim_it_reports():
    """The claims report matches a row to the paper's spec by the row's ``spec``: claims 1-3 report
    L2G-1 to L2G-3 and both halves of claim 4 report L2G-4, on the spec's figures."""
    specs = {spec.id: spec for spec in PAPER.claims}
    claims = basins.landscape_claims(BASINS, GRID, SETTINGS)
    assert [c.spec for c in claims] == ["L2G-1", "L2G-2", "L2G-3", "L2G-4", "L2G-4"]
    assert all(specs[c.spec].figure == c.figure for c in claims)


def test_claims_just_inside_their_bounds_hold():
    inside = BASINS.assign(
        max_energy_drift=BASINS.max_energy_drift.clip(upper=9e-9),
        max_endpoint_loss_error=BASINS.max_endpoint_loss_error.clip(upper=9e-7),
    )
    claims = {c.claim_id: c for c in basins.landscape_claims(inside, GRID.assign(agreeing=GRID.n_starts), SETTINGS)}
    assert claims["1"].holds and claims["1"].reason == "280/280 starts over 2 chains; worst p=0.9, q=0.9: 200/200"
    assert claims["2"].holds and claims["2"].measured == 9e-9
    assert claims["3"].holds and claims["3"].measured == 9e-7


def test_without_small_sigmas_claim_4_cannot_hold():
    claims = {c.claim_id: c for c in basins.landscape_claims(BASINS[BASINS.sigma > 0.1], GRID, SETTINGS)}
    for claim_id, side in (("4a", "p+q>1"), ("4b", "p+q<1")):
        assert not claims[claim_id].holds and math.isnan(claims[claim_id].measured)
        assert claims[claim_id].reason == "no run with p+q>1 and a small sigma in the config".replace("p+q>1", side)
    # only one side of p + q = 1 measured: the other has no runs
    above = {c.claim_id: c for c in basins.landscape_claims(BASINS[BASINS.p == 0.9], GRID, SETTINGS)}
    assert above["4a"].holds and above["4a"].reason == "2-D and 3-D, sigma in {0.05, 0.1}, 3 runs of 200 starts"
    assert not above["4b"].holds and above["4b"].reason == "no run with p+q<1 and a small sigma in the config"


def test_measuring_the_basins_logs_one_line_per_model_chain_and_sigma(caplog):
    logger = logging.getLogger("test.basins")
    with caplog.at_level(logging.INFO, logger="test.basins"):
        table = basins.measure_basins(SETTINGS, log=logger)
    assert [r.getMessage() for r in caplog.records] == [
        "2d p=0.9 q=0.9 sigma=0.05: local 1.000 theory 1.0",
        "3d p=0.9 q=0.9 sigma=0.05: local 1.000 theory nan",
    ]
    assert list(table.model) == ["2d", "3d"] and (table.n_starts == 3).all()


def test_grid_agreement_counts_endpoints_in_their_predicted_basin(monkeypatch):
    """The grid's flows replaced by labels chosen by hand: agreement, drift and loss error per chain,
    with the settings' horizon and number of rounds passed on."""
    import dataclasses

    from replication.papers.local_to_global.landscape import canonical
    from replication.papers.local_to_global.markov import MarkovChain

    settings = dataclasses.replace(
        SETTINGS, chains=(MarkovChain(0.9, 0.9), MarkovChain(0.1, 0.1)), flow_time=12.0, rounds=7
    )
    calls = []

    def flow_endpoints(chain, model, starts, flow_time, rounds=4):
        calls.append((chain, model, len(starts), flow_time, rounds))
        labels = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1]).copy()
        if chain.p == 0.1:
            labels[:3] = canonical.UNCONVERGED  # three starts that did not settle
        local = labels == canonical.LOCAL_MIN
        return pd.DataFrame(
            {
                "e": starts[:, 0],
                "w": starts[:, 1],
                "endpoint": labels,
                "loss": np.where(local, chain.unigram_loss + 1e-7 * (1 + (chain.p == 0.1)), chain.bigram_loss),
                "energy_drift": np.linspace(0, 1e-9 * chain.p, len(starts)),
            }
        )

    monkeypatch.setattr(basins, "flow_endpoints", flow_endpoints)
    grid = basins.grid_agreement(settings)
    n = len(basins.starting_grid(4, 2.0, 0.05))
    assert n == 16 and calls == [(settings.chains[0], "2d", n, 12.0, 7), (settings.chains[1], "2d", n, 12.0, 7)]
    assert list(grid.columns) == ["p", "q", "n_starts", "agreeing", "max_energy_drift", "max_endpoint_loss_error"]
    assert grid[["p", "q", "n_starts", "agreeing"]].values.tolist() == [[0.9, 0.9, 16, 16], [0.1, 0.1, 16, 13]]
    assert np.allclose(grid.max_energy_drift, [0.9e-9, 0.1e-9], rtol=1e-12)
    # the local minima's losses are off by 1e-7 and 2e-7, the global minima's exact
    assert np.allclose(grid.max_endpoint_loss_error, [1e-7, 2e-7], rtol=1e-6, atol=0)


def test_a_model_missing_from_the_basins_shows_as_nan_drift():
    claims = {c.claim_id: c for c in basins.landscape_claims(BASINS[BASINS.model == "2d"], GRID, SETTINGS)}
    assert claims["2"].reason == "every basin start and grid start; 2-D 1.0e-08, 3-D nan"
    claims = {c.claim_id: c for c in basins.landscape_claims(BASINS[BASINS.model == "3d"], GRID, SETTINGS)}
    assert claims["2"].reason == "every basin start and grid start; 2-D nan, 3-D 3.0e-09"


def test_basin_starts_are_one_draw_scaled_by_each_sigma_and_shared(monkeypatch, capsys):
    """The documented pairing: one N(0, 1) draw of shape (n, 3) from the seed, scaled by every sigma,
    the same for every chain, the 2-D model taking its first two columns (e, w); the table has one
    row per chain, sigma and model, with the flows' settings passed on."""
    import dataclasses

    import tqdm.std

    from replication.papers.local_to_global.landscape import canonical
    from replication.papers.local_to_global.markov import MarkovChain

    monkeypatch.setattr(tqdm.std, "time", lambda: 1000.0)  # a stopped clock: the bar redraws only when forced
    settings = dataclasses.replace(
        SETTINGS, chains=(MarkovChain(0.9, 0.9), MarkovChain(0.1, 0.1)), sigmas=(0.05, 2.0), n_starts=5, rounds=6
    )
    calls = []

    def flow_endpoints(chain, model, starts, flow_time, rounds=4):
        calls.append((chain, model, starts, flow_time, rounds))
        label = canonical.LOCAL_MIN if chain.switching > 1 else canonical.GLOBAL_MIN
        frame = pd.DataFrame(starts, columns=["e", "w", "a"][: starts.shape[1]])
        loss = chain.unigram_loss if chain.switching > 1 else chain.bigram_loss
        return frame.assign(endpoint=label, loss=loss, energy_drift=1e-12)

    monkeypatch.setattr(basins, "flow_endpoints", flow_endpoints)
    table = basins.measure_basins(settings)
    normal = np.random.default_rng(3).standard_normal((5, 3))
    assert [(c[0], c[1]) for c in calls] == [
        (chain, model) for chain in settings.chains for _ in settings.sigmas for model in ("2d", "3d")
    ]
    assert all(flow_time == 300.0 and rounds == 6 for *_, flow_time, rounds in calls)
    for index, (_, model, starts, _, _) in enumerate(calls):
        sigma = settings.sigmas[(index // 2) % 2]
        np.testing.assert_array_equal(starts, sigma * normal[:, : 2 if model == "2d" else 3])
    assert list(table.columns) == [
        "model", "p", "q", "sigma", "n_starts", "fraction_local_min", "fraction_global_min", "fraction_other",
        "fraction_local_min_theory", "fraction_agreeing_with_theory", "max_energy_drift", "max_endpoint_loss_error",
    ]  # fmt: skip
    assert table[["model", "p", "sigma"]].values.tolist() == [
        ["2d", 0.9, 0.05], ["3d", 0.9, 0.05], ["2d", 0.9, 2.0], ["3d", 0.9, 2.0],
        ["2d", 0.1, 0.05], ["3d", 0.1, 0.05], ["2d", 0.1, 2.0], ["3d", 0.1, 2.0],
    ]  # fmt: skip
    assert table.fraction_agreeing_with_theory[table.model == "3d"].isna().all()
    assert table.fraction_local_min_theory[table.model == "3d"].isna().all()
    assert (table.max_endpoint_loss_error == 0).all() and (table.max_energy_drift == 1e-12).all()
    # the progress bar, labelled, drawn at the start and the end only
    err = capsys.readouterr().err
    assert re.search(r"(^|\r)basins: ", err) and "8/8" in err and not any(f" {k}/8 " in err for k in range(1, 8))


def test_basins_under_a_noise_member_move_in_the_last_bits(monkeypatch):
    from replication.perturbation import VARIABLE

    base = basins.measure_basins(SETTINGS)
    monkeypatch.setenv(VARIABLE, "3")
    member = basins.measure_basins(SETTINGS)
    np.testing.assert_array_equal(member.fraction_local_min, base.fraction_local_min)
    assert np.allclose(member.max_energy_drift, base.max_energy_drift, atol=1e-12)


def test_relative_drift_is_relative_to_the_start_energy_but_at_least_one():
    start = np.array([4.0, 0.5, -1.5, -8.0])
    energy = np.array([5.0, 1.0, -3.0, -6.0])
    np.testing.assert_array_equal(basins.relative_drift(energy, start), [0.25, 0.5, 1.0, 0.25])


def test_endpoint_loss_error_without_minima_is_nan():
    from replication.papers.local_to_global.landscape import canonical
    from replication.papers.local_to_global.markov import MarkovChain

    ends = pd.DataFrame({"endpoint": [canonical.SADDLE, canonical.UNCONVERGED], "loss": [0.7, 0.6]})
    assert math.isnan(basins.endpoint_loss_error(MarkovChain(0.2, 0.3), ends))


def test_flow_endpoints_rounds_horizons_and_what_is_integrated(monkeypatch):
    """The integrator replaced by a stand-in: start 0 reaches the global-minimum curve in round 1 (its
    path's earlier samples are elsewhere), start 1 never settles. Every round integrates only the
    unsettled starts, sampled at 0, 1e-3, 1e-2, 1e-1 and 1 horizon, with DOP853 at ATOL."""
    from replication.papers.local_to_global.landscape import canonical
    from replication.papers.local_to_global.markov import MarkovChain

    chain = MarkovChain(0.2, 0.3)
    target = np.array([np.sqrt(chain.optimal_gap / canonical.signed_square(0.5)), 0.5])
    calls = []

    def integrate_flow(field, starts, t_end, t_eval, atol, method):
        calls.append((starts.copy(), t_end, np.array(t_eval), atol, method))
        path = np.repeat(starts[None], len(t_eval), axis=0)
        path[:, :, 1] += np.linspace(0, 0.01, len(t_eval))[:, None]  # w moves a little: the energy drifts
        if len(starts) == 2:
            path[-1, 0] = target  # start 0 lands on a global minimum at the end of its first round only
        return np.array(t_eval), path

    monkeypatch.setattr(basins, "integrate_flow", integrate_flow)
    starts = np.array([[1, 2], [1, -3]])  # integers: taken as floats, not rounded
    original = starts.copy()
    ends = basins.flow_endpoints(chain, "2d", starts, 7.0)
    np.testing.assert_array_equal(starts, original)  # the caller's array is left alone
    assert len(calls) == 4  # four horizons by default
    assert [len(c[0]) for c in calls] == [2, 1, 1, 1]  # the settled start is not integrated again
    for _, t_end, t_eval, atol, method in calls:
        assert t_end == 7.0 and atol == basins.ATOL and method == "DOP853"
        np.testing.assert_allclose(t_eval, [0.0, 7e-3, 7e-2, 0.7, 7.0], rtol=1e-15)
    np.testing.assert_allclose(calls[1][0], [[1.0, -2.99]], rtol=1e-12)  # round 2 goes on from round 1's end
    assert list(ends.endpoint) == [canonical.GLOBAL_MIN, canonical.UNCONVERGED]
    np.testing.assert_allclose(ends[["e", "w"]].to_numpy()[0], target, rtol=1e-15)
    np.testing.assert_allclose(ends.w[1], -3.0 + 4 * 0.01, rtol=1e-12)
    # each start's own largest drift: start 1 moved w by 0.04 in all, start 0 jumped to the curve
    drift = basins.relative_drift(canonical.energy(*ends[["e", "w"]].to_numpy().T), canonical.energy(*original.T))
    assert ends.energy_drift[1] == pytest.approx(drift[1], rel=1e-9) and ends.energy_drift[0] != ends.energy_drift[1]
    np.testing.assert_allclose(ends.loss, canonical.loss(chain, ends.e, ends.w), rtol=1e-15)
    floats = original.astype(float)  # already float: no conversion, and still not written to
    basins.flow_endpoints(chain, "2d", floats, 7.0)
    np.testing.assert_array_equal(floats, original)
    none = basins.flow_endpoints(chain, "2d", starts, 7.0, rounds=0)
    assert list(none.endpoint) == [canonical.UNCONVERGED] * 2 and (none.energy_drift == 0).all()
