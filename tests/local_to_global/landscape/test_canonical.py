"""The canonical two-parameter model of Local to Global (Fig. 1)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_expit

from helpers import shared_scope
from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.landscape.flow import integrate_flow
from replication.papers.local_to_global.markov import MarkovChain

CHAINS = [MarkovChain(0.1, 0.1), MarkovChain(0.9, 0.9), MarkovChain(0.5, 0.8), MarkovChain(0.2, 0.3)]
IDS = [f"p={c.p},q={c.q}" for c in CHAINS]


def loss_with_bias(chain, e, w, b):
    """The population loss with an explicit bias, written from the logit, not from F(D)."""
    pi0, pi1 = chain.stationary
    z1 = e**2 * (1 + 2 * w * abs(w)) + b - e**2 / 2
    z0 = b - e**2 / 2
    return -pi1 * ((1 - chain.q) * log_expit(z1) + chain.q * log_expit(-z1)) - pi0 * (
        chain.p * log_expit(z0) + (1 - chain.p) * log_expit(-z0)
    )


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_reference_losses(chain):
    expected = {
        (0.5, 0.8): (0.6663, 0.6190),
        (0.2, 0.3): (0.6730, 0.5446),
        (0.1, 0.1): (0.6931, 0.3251),
        (0.9, 0.9): (0.6931, 0.3251),
    }
    unigram, bigram = expected[(chain.p, chain.q)]
    assert chain.unigram_loss == pytest.approx(unigram, abs=5e-5)
    assert chain.bigram_loss == pytest.approx(bigram, abs=5e-5)
    assert chain.loss_of_gap(chain.optimal_gap) == pytest.approx(chain.bigram_loss, abs=1e-12)
    assert chain.loss_of_gap(0.0) == pytest.approx(chain.unigram_loss, abs=1e-12)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_closed_form_bias_equals_numerical_minimisation(chain):
    rng = np.random.default_rng(0)
    # |e|, |w| <= 1.2 keeps |D| small enough for a well-conditioned numerical minimum.
    for e, w in rng.uniform(-1.2, 1.2, size=(20, 2)):
        numeric = minimize_scalar(lambda b, e=e, w=w: loss_with_bias(chain, e, w, b), bracket=(-5, 5), tol=1e-12)
        b_star = chain.optimal_offset(canonical.gap(e, w)) + e**2 / 2
        assert b_star == pytest.approx(numeric.x, abs=1e-5)
        assert canonical.loss(chain, e, w) == pytest.approx(numeric.fun, abs=1e-12)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_gradient_equals_finite_differences(chain):
    rng = np.random.default_rng(1)
    step = 1e-6
    for e, w in rng.uniform(-2, 2, size=(20, 2)):
        de, dw = canonical.gradient(chain, e, w)
        fd_e = (canonical.loss(chain, e + step, w) - canonical.loss(chain, e - step, w)) / (2 * step)
        fd_w = (canonical.loss(chain, e, w + step) - canonical.loss(chain, e, w - step)) / (2 * step)
        assert de == pytest.approx(fd_e, abs=1e-7)
        assert dw == pytest.approx(fd_w, abs=1e-7)


def test_optimal_offset_is_stable_for_large_gaps():
    chain = MarkovChain(0.2, 0.3)
    for gap in (-300.0, -40.0, 40.0, 300.0):
        assert np.isfinite(chain.optimal_offset(gap))
        assert np.isfinite(chain.loss_of_gap(gap))


def _flows(chain, starts, t_end=3000.0):
    # Endpoints only need to be classified: a looser tolerance than the energy test's suffices.
    _, path = integrate_flow(canonical.flow_gradient(chain), starts, t_end, rtol=1e-9, atol=1e-11)
    return path[-1]


def _starting_grid(chain, margin=0.05):
    """Starts on a grid, away from the measure-zero sets where the theorem is silent."""
    w, e = np.meshgrid(np.linspace(-2.9, 2.9, 20), np.linspace(-2.9, 2.9, 20))
    w, e = w.ravel(), e.ravel()
    g = canonical.separatrix(w)
    keep = (np.abs(e) > margin) & (np.abs(w) > margin) & ~(np.abs(np.abs(e) - np.nan_to_num(g, nan=-9)) < margin)
    return np.column_stack([e[keep], w[keep]])


@pytest.fixture(scope=shared_scope, params=CHAINS, ids=IDS)
def grid_flows(request):
    """(chain, starts, endpoints) of flows from a grid of starts, shared by the tests below."""
    chain = request.param
    starts = _starting_grid(chain)
    return chain, starts, _flows(chain, starts)


@pytest.mark.heavy
def test_theorem_basins_match_integrated_endpoints(grid_flows):
    chain, starts, end = grid_flows
    observed = canonical.classify_endpoint(chain, end[:, 0], end[:, 1])
    predicted = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1])
    assert len(starts) > 250
    assert set(observed) <= {canonical.GLOBAL_MIN, canonical.LOCAL_MIN}
    assert {canonical.GLOBAL_MIN, canonical.LOCAL_MIN} <= set(predicted)  # both basins are hit
    np.testing.assert_array_equal(observed, predicted)


@pytest.mark.heavy
@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_energy_is_conserved_along_flows(chain):
    starts = np.random.default_rng(2).uniform(-2.5, 2.5, size=(64, 2))
    assert np.all(np.abs(starts[:, 1]) > 1e-3)  # E is infinite on w = 0
    times = np.linspace(0, 200, 50)
    _, path = integrate_flow(canonical.flow_gradient(chain), starts, times[-1], t_eval=times)
    energy = canonical.energy(path[..., 0], path[..., 1])
    drift = np.abs(energy - energy[0]) / np.abs(energy[0])
    assert drift.max() < 1e-8


@pytest.mark.heavy
def test_endpoint_losses_are_unigram_or_entropy_rate(grid_flows):
    chain, _, end = grid_flows
    losses = canonical.loss(chain, end[:, 0], end[:, 1])
    label = canonical.classify_endpoint(chain, end[:, 0], end[:, 1])
    np.testing.assert_allclose(losses[label == canonical.LOCAL_MIN], chain.unigram_loss, atol=1e-8)
    np.testing.assert_allclose(losses[label == canonical.GLOBAL_MIN], chain.bigram_loss, atol=1e-8)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_critical_sets(chain):
    w = np.linspace(-3, 3, 101)
    locus = canonical.global_min_locus(chain, w)
    found = ~np.isnan(locus)
    assert found.any()
    # The locus lies on w > -1/sqrt2 when p+q<1 and on w < -1/sqrt2 when p+q>1 (Thm 1).
    if chain.switching < 1:
        assert np.all(w[found] > canonical.SADDLE_W)
    else:
        assert np.all(w[found] < canonical.SADDLE_W)
    np.testing.assert_allclose(canonical.gap(locus[found], w[found]), chain.optimal_gap, rtol=1e-10)
    grad = canonical.gradient(chain, locus[found], w[found])
    np.testing.assert_allclose(grad, 0, atol=1e-12)
    assert canonical.separatrix(canonical.SADDLE_W) == pytest.approx(0, abs=1e-7)
    assert canonical.energy(0.0, canonical.SADDLE_W) == pytest.approx(canonical.SADDLE_ENERGY)


@pytest.mark.parametrize("chain", [MarkovChain(0.9, 0.9), MarkovChain(0.2, 0.3)], ids=["p+q>1", "p+q<1"])
def test_theorem_basins_on_a_few_starts(chain):
    """Thms 2 and 8 against integrated flows from starts on both sides of the separatrix (fast)."""
    from replication.papers.local_to_global.landscape.basins import flow_endpoints

    w = np.array([-2.0, -1.2, -0.5, -0.3, 0.4, 1.5])
    g = np.nan_to_num(canonical.separatrix(w), nan=0.0)
    starts = np.column_stack(
        [np.concatenate([0.5 * g + 0.05, g + 0.4, -(g + 0.4)]), np.concatenate([w, w, w])]
    )  # inside, outside, and outside with e < 0
    ends = flow_endpoints(chain, "2d", starts, 300.0, rounds=6)
    predicted = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1])
    assert {canonical.GLOBAL_MIN, canonical.LOCAL_MIN} <= set(predicted)
    np.testing.assert_array_equal(ends.endpoint.to_numpy(), predicted)
    # On e = 0 the flow stands still: a local maximum where the line is not a local minimum.
    w_line = np.array([-1.0, -0.2, 0.5])
    on_axis = canonical.predicted_basin(chain, 0.0, w_line)
    expected = np.where(canonical.is_local_min_line(chain, w_line), canonical.LOCAL_MIN, canonical.LOCAL_MAX)
    np.testing.assert_array_equal(on_axis, expected)
    # Exactly on the separatrix the flow ends at the saddle (on the side of w where it exists for the chain).
    w_sep = np.array([-0.5, -0.3]) if chain.switching > 1 else np.array([-1.5, -1.0])
    np.testing.assert_array_equal(
        canonical.predicted_basin(chain, canonical.separatrix(w_sep), w_sep), [canonical.SADDLE] * 2
    )


def test_endpoint_labels_on_hand_placed_points():
    """Each label of classify_endpoint, and the tolerance band around every critical set."""
    chain = MarkovChain(0.9, 0.9)  # p+q > 1: e = 0 is a local minimum where 1 + 2w|w| > 0
    w_global = np.array([-1.5, -1.0])
    e_global = canonical.global_min_locus(chain, w_global)
    e = np.array([*e_global, 0.0, 0.0, 0.0, 5e-5, 1e-4, 0.01, 1.0, 0.0])
    w = np.array([*w_global, 0.5, -1.5, canonical.SADDLE_W, 0.3, 0.3, 0.3, 0.3, canonical.SADDLE_W + 5e-5])
    expected = [canonical.GLOBAL_MIN] * 2 + [
        canonical.LOCAL_MIN,
        canonical.LOCAL_MAX,
        canonical.SADDLE,
        canonical.LOCAL_MIN,  # within the tolerance of e = 0
        canonical.UNCONVERGED,  # |e| = tol is outside: the band is open
        canonical.UNCONVERGED,
        canonical.UNCONVERGED,
        canonical.SADDLE,
    ]
    labels = canonical.classify_endpoint(chain, e, w)
    assert labels.dtype == object
    np.testing.assert_array_equal(labels, expected)
    # The gap of another model replaces this model's gap: with D = D* every point is a global minimum.
    off_axis = np.array([1.0, 2.0]), np.array([0.3, -0.3])
    np.testing.assert_array_equal(canonical.classify_endpoint(chain, *off_axis), [canonical.UNCONVERGED] * 2)
    np.testing.assert_array_equal(
        canonical.classify_endpoint(chain, *off_axis, gap_value=np.full(2, chain.optimal_gap)),
        [canonical.GLOBAL_MIN] * 2,
    )
    np.testing.assert_array_equal(canonical.classify_endpoint(chain, [1e-2], [0.3], tol=0.1), [canonical.LOCAL_MIN])
    # p+q < 1 flips the e = 0 line: local maxima where it was minima.
    flipped = canonical.classify_endpoint(MarkovChain(0.2, 0.3), [0.0, 0.0], [0.5, -1.5])
    np.testing.assert_array_equal(flipped, [canonical.LOCAL_MAX, canonical.LOCAL_MIN])


def test_separatrix_values():
    w = np.array([-2.0, -1.0, canonical.SADDLE_W, -0.3, 0.0, 0.5])
    g = canonical.separatrix(w)
    inside = w[:4] ** 2 - np.log(-w[:4]) + canonical.SADDLE_ENERGY
    np.testing.assert_allclose(g[:4], np.sqrt(np.maximum(inside, 0)), rtol=1e-14)
    assert g[0] > 1 and np.isnan(g[4]) and np.isnan(g[5])  # defined for w < 0 only
    # The separatrix is a level set of the energy at the saddle's value.
    np.testing.assert_allclose(canonical.energy(g[:4], w[:4]), canonical.SADDLE_ENERGY, atol=1e-12)


def test_global_minimum_locus_values():
    """|e| = sqrt(D* / (1 + 2w|w|)) where that is positive, also below 1; NaN where it is not."""
    chain = MarkovChain(0.2, 0.3)  # D* = log(0.56 / 0.06) = 2.2336
    w = np.array([0.0, 1.0, 2.0, -1.0])
    expected = np.sqrt(chain.optimal_gap / np.array([1.0, 3.0, 9.0]))
    locus = canonical.global_min_locus(chain, w)
    np.testing.assert_allclose(locus[:3], expected, rtol=1e-12)
    assert locus[2] < 1 and np.isnan(locus[3])


def test_theorem_basins_on_the_axis_w_0_and_at_the_saddle():
    """Thm 2 (p+q>1): I_min contains the whole half-plane w >= 0, the axis w = 0 included; the saddle
    (0, -1/sqrt 2) is in I_sad for both theorems (g(-1/sqrt 2) = 0)."""
    above, below = MarkovChain(0.9, 0.9), MarkovChain(0.1, 0.1)
    assert canonical.separatrix(canonical.SADDLE_W) == 0.0
    assert list(canonical.predicted_basin(above, [1.0, 2.5], [0.0, 0.0])) == [canonical.LOCAL_MIN] * 2
    assert list(canonical.predicted_basin(below, [1.0, 2.5], [0.0, 0.0])) == [canonical.GLOBAL_MIN] * 2
    for chain in (above, below):
        assert list(canonical.predicted_basin(chain, [0.0], [canonical.SADDLE_W])) == [canonical.SADDLE]


def test_endpoint_labels_at_an_exact_tolerance():
    """tol = 2^-10: D* + tol and -1/sqrt 2 + tol are exact in binary, so each point sits exactly at
    the tolerance from its set, which is not within it."""
    chain, tol = MarkovChain(0.2, 0.3), 2.0**-10
    gap = np.array([chain.optimal_gap + tol, chain.optimal_gap + tol / 2])
    labels = canonical.classify_endpoint(chain, [0.5, 0.5], [0.3, 0.3], tol=tol, gap_value=gap)
    assert list(labels) == [canonical.UNCONVERGED, canonical.GLOBAL_MIN]
    w = np.array([canonical.SADDLE_W + tol, canonical.SADDLE_W + tol / 2])
    labels = canonical.classify_endpoint(chain, [0.0, 0.0], w, tol=tol)
    # p + q < 1: on e = 0 at 1 + 2w|w| > 0 a local maximum; within tol of the saddle's w the saddle
    assert list(labels) == [canonical.LOCAL_MAX, canonical.SADDLE]


def test_single_precision_inputs_are_computed_in_double_precision():
    """float32 coordinates (as trained parameters are) give the results of the same numbers in float64."""
    chain = MarkovChain(0.9, 0.9)
    e32, w32 = np.float32([1e-4, 0.3, 1.7]), np.float32([0.5, -0.45, 1.3])
    e64, w64 = e32.astype(float), w32.astype(float)
    np.testing.assert_array_equal(canonical.signed_square(w32), canonical.signed_square(w64))
    np.testing.assert_array_equal(canonical.gap(e32, w32), canonical.gap(e64, w64))
    # float32(1e-4) is just below 1e-4: on the e = 0 line in double precision
    np.testing.assert_array_equal(
        canonical.classify_endpoint(chain, e32, w32), canonical.classify_endpoint(chain, e64, w64)
    )
    assert canonical.classify_endpoint(chain, e32, w32)[0] == canonical.LOCAL_MIN


def test_energy_on_the_axis_w_0_raises_no_divide_by_zero():
    """log|w| at w = 0 is taken silently (the energy is not finite there: the e-axis is a barrier)."""
    with np.errstate(divide="raise", invalid="ignore"):
        energy = canonical.energy(np.array([1.0, 1.0]), np.array([0.0, 0.5]))
    assert not np.isfinite(energy[0]) and energy[1] == pytest.approx(1.0 - 0.25 + np.log(2.0))
