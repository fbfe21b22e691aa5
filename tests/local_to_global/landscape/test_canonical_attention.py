"""The canonical model with the attention scalar, theta = (e, w, a) (Figs. 2 and 5)."""

import numpy as np
import pytest
from scipy.special import log_expit

from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.landscape import canonical3d as attention
from replication.papers.local_to_global.landscape.flow import clocked_field, integrate_flow
from replication.papers.local_to_global.markov import MarkovChain, log_sigmoid_slope

CHAINS = [MarkovChain(0.1, 0.1), MarkovChain(0.9, 0.9), MarkovChain(0.5, 0.8), MarkovChain(0.2, 0.3)]
IDS = [f"p={c.p},q={c.q}" for c in CHAINS]


def _energy_without_a(e, w):
    return canonical.energy(e, w)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_gradient_equals_finite_differences(chain):
    step = 1e-6
    for theta in np.random.default_rng(1).uniform(-1.5, 1.5, size=(20, 3)):
        analytic = attention.gradient(chain, *theta)
        for axis in range(3):
            shift = np.eye(3)[axis] * step
            numeric = (attention.loss(chain, *(theta + shift)) - attention.loss(chain, *(theta - shift))) / (2 * step)
            assert analytic[axis] == pytest.approx(numeric, abs=1e-7)


@pytest.mark.parametrize("model, dimension", [(canonical, 2), (attention, 3)])
def test_gap_hessian_norm_equals_finite_differences(model, dimension):
    step = 1e-6
    for theta in np.random.default_rng(2).uniform(-1.5, 1.5, size=(10, dimension)):
        _, grad, hessian = model.gap_derivatives(*theta)
        columns = [
            (model.gap_derivatives(*(theta + step * unit))[1] - model.gap_derivatives(*(theta - step * unit))[1])
            / (2 * step)
            for unit in np.eye(dimension)
        ]
        assert hessian == pytest.approx(np.linalg.norm(np.array(columns)), rel=1e-6)
        assert grad[0] == pytest.approx(
            (
                model.gap_derivatives(*(theta + step * np.eye(dimension)[0]))[0]
                - model.gap_derivatives(*(theta - step * np.eye(dimension)[0]))[0]
            )
            / (2 * step),
            rel=1e-6,
        )


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_loss_curvature_equals_finite_differences(chain):
    gaps, step = np.linspace(-8, 8, 33), 1e-6
    numeric = (chain.loss_slope(gaps + step) - chain.loss_slope(gaps - step)) / (2 * step)
    np.testing.assert_allclose(chain.loss_curvature(gaps), numeric, rtol=1e-6, atol=1e-12)
    far = chain.loss_curvature(np.array([-1e4, 1e4]))  # underflows in the naive form, 0/0
    assert np.all(np.isfinite(far)) and np.all(far >= 0)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_slope_and_curvature_together_equal_each_alone(chain):
    gaps = np.r_[np.linspace(-40, 40, 161), -1e4, 1e4, 0.0]
    slope, curvature = chain.slope_and_curvature(gaps)
    np.testing.assert_array_equal(slope, chain.loss_slope(gaps))
    np.testing.assert_array_equal(curvature, chain.loss_curvature(gaps))


def test_log_sigmoid_slope_equals_the_two_log_sigmoids():
    z = np.r_[np.linspace(-800, 800, 4001), np.geomspace(1e-300, 1e3, 200), -np.geomspace(1e-300, 1e3, 200), 0.0]
    direct = log_expit(z) + log_expit(-z)
    np.testing.assert_allclose(log_sigmoid_slope(z), direct, rtol=4 * np.finfo(float).eps, atol=0)
    assert log_sigmoid_slope(np.array([0.0]))[0] == pytest.approx(np.log(0.25), rel=1e-15)


def test_attention_scalar_zero_is_the_two_dimensional_model():
    e, w = np.random.default_rng(3).uniform(-2, 2, size=(2, 200))
    for chain in CHAINS:
        np.testing.assert_array_equal(attention.gap(e, w, 0.0), canonical.gap(e, w))
        np.testing.assert_array_equal(attention.loss(chain, e, w, 0.0), canonical.loss(chain, e, w))
        de, dw, _ = attention.gradient(chain, e, w, 0.0)
        de2, dw2 = canonical.gradient(chain, e, w)
        np.testing.assert_array_equal(de, de2)
        np.testing.assert_array_equal(dw, dw2)
    np.testing.assert_array_equal(attention.energy(e, w, 0.0), canonical.energy(e, w))


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_the_flow_fixes_the_coefficient_of_a_squared_to_minus_two(chain):
    """Fit c in E2(e, w) + c a^2 = const along plain gradient flows: the flow itself decides c."""
    starts = np.random.default_rng(4).normal(0, 0.8, size=(16, 3))
    times = np.linspace(0, 20, 21)
    _, path = integrate_flow(attention.flow_gradient(chain), starts, times[-1], t_eval=times, method="DOP853")
    e, w, a = np.moveaxis(path, -1, 0)
    two_d, a_squared = _energy_without_a(e, w), a**2
    moved = np.abs(a_squared[-1] - a_squared[0]) > 1e-3
    assert moved.sum() >= 4
    c = -(two_d[-1] - two_d[0])[moved] / (a_squared[-1] - a_squared[0])[moved]
    np.testing.assert_allclose(c, -2.0, rtol=1e-7)


@pytest.mark.heavy
@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_energy_is_conserved_along_plain_and_clocked_flows(chain):
    starts = np.random.default_rng(5).normal(0, 1.0, size=(32, 3))
    times = np.linspace(0, 50, 26)
    for field in (attention.flow_gradient(chain), clocked_field(chain, attention.gap_derivatives)):
        _, path = integrate_flow(field, starts, times[-1], t_eval=times, method="DOP853", atol=1e-30)
        energy = attention.energy(*np.moveaxis(path, -1, 0))
        assert (np.abs(energy - energy[0]) / np.abs(energy[0])).max() < 1e-8
        wrong_sign = energy + 4 * path[..., 2] ** 2  # E with +2a^2
        assert (np.abs(wrong_sign - wrong_sign[0]) / np.abs(wrong_sign[0])).max() > 1e-3


@pytest.mark.heavy
@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_clocked_flow_has_the_plain_flows_limits(chain):
    starts = np.random.default_rng(6).normal(0, 0.7, size=(24, 3))
    _, plain = integrate_flow(attention.flow_gradient(chain), starts, 400.0, method="DOP853", atol=1e-30)
    _, clocked = integrate_flow(
        clocked_field(chain, attention.gap_derivatives), starts, 400.0, method="DOP853", atol=1e-30
    )
    labels = attention.classify_endpoint(chain, *plain[-1].T)
    assert set(labels) <= {canonical.GLOBAL_MIN, canonical.LOCAL_MIN}
    np.testing.assert_array_equal(attention.classify_endpoint(chain, *clocked[-1].T), labels)
    # Same limit point, not only the same kind: (w, a) are frozen on e = 0, D = D* elsewhere.
    np.testing.assert_allclose(clocked[-1], plain[-1], atol=1e-5)


@pytest.mark.heavy
@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_endpoint_losses_are_unigram_or_entropy_rate(chain):
    starts = np.random.default_rng(7).normal(0, 1.0, size=(100, 3))
    _, path = integrate_flow(
        clocked_field(chain, attention.gap_derivatives), starts, 1000.0, method="DOP853", atol=1e-30
    )
    end = path[-1]
    labels = attention.classify_endpoint(chain, *end.T)
    losses = attention.loss(chain, *end.T)
    assert {canonical.GLOBAL_MIN, canonical.LOCAL_MIN} <= set(labels)
    np.testing.assert_allclose(losses[labels == canonical.LOCAL_MIN], chain.unigram_loss, atol=1e-8)
    np.testing.assert_allclose(losses[labels == canonical.GLOBAL_MIN], chain.bigram_loss, atol=1e-8)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_critical_sets(chain):
    rng = np.random.default_rng(8)
    e, w = rng.uniform(-2, 2, size=(2, 400))
    a = attention.global_min_scalar(chain, e, w)
    np.testing.assert_allclose(attention.gap(e, w, a), chain.optimal_gap, rtol=1e-9)
    np.testing.assert_allclose(np.stack(attention.gradient(chain, e, w, a)), 0.0, atol=1e-9)
    np.testing.assert_allclose(attention.loss(chain, e, w, a), chain.bigram_loss, atol=1e-12)
    # The stationary set and the whole e = 0 plane are critical, at loss H(pi).
    a_stat = attention.stationary_scalar(e)
    for point in ((e, np.full_like(e, canonical.SADDLE_W), a_stat), (0 * e, w, rng.uniform(-2, 2, e.shape))):
        np.testing.assert_allclose(np.stack(attention.gradient(chain, *point)), 0.0, atol=1e-12)
        np.testing.assert_allclose(attention.loss(chain, *point), chain.unigram_loss, atol=1e-12)
    assert set(attention.classify_endpoint(chain, e, np.full_like(e, canonical.SADDLE_W), a_stat)) == {
        attention.STATIONARY
    }
    # Off the e = 0 plane the loss rises on local minima and falls on local maxima, whatever a.
    w_plane, a_plane = rng.uniform(-2, 2, size=(2, 400))
    keep = np.abs(canonical.signed_square(w_plane)) > 0.05
    rise = attention.loss(chain, 1e-3, w_plane, a_plane) - chain.unigram_loss
    local = canonical.is_local_min_line(chain, w_plane)
    assert np.all(rise[keep & local] > 0) and np.all(rise[keep & ~local] < 0)


def test_endpoint_labels_of_the_attention_model_on_hand_placed_points():
    chain = MarkovChain(0.9, 0.9)
    e, w = np.array([0.8, 1.5]), np.array([0.2, -1.2])
    a_global = attention.global_min_scalar(chain, e, w)
    e_stat = np.array([1.0, 2.0])
    points = [
        (e, w, a_global),  # on the global-minimum surface: D = D*
        ([0.0, 0.0], [0.5, -1.5], [3.0, -3.0]),  # on e = 0: the 2-D labels by w, whatever a is
        (e_stat, [canonical.SADDLE_W] * 2, attention.stationary_scalar(e_stat)),  # the stationary set
        ([0.5e-4], [canonical.SADDLE_W], [-4e8]),  # |e| < tol: on e = 0, at the saddle
        ([1.0, 1.0], [canonical.SADDLE_W + 2e-4, canonical.SADDLE_W], [-1.0, -1.0 + 2e-4]),  # beyond tol
        ([1.0, 0.5], [0.3, 0.3], [0.0, 0.0]),  # nowhere
    ]
    expected = [
        [canonical.GLOBAL_MIN] * 2,
        [canonical.LOCAL_MIN, canonical.LOCAL_MAX],
        [attention.STATIONARY] * 2,
        [canonical.SADDLE],
        [canonical.UNCONVERGED] * 2,
        [canonical.UNCONVERGED] * 2,
    ]
    for (pe, pw, pa), labels in zip(points, expected):
        np.testing.assert_array_equal(attention.classify_endpoint(chain, pe, pw, pa), labels)
    np.testing.assert_array_equal(
        attention.classify_endpoint(chain, [0.05], [0.3], [0.0], tol=0.1), [canonical.LOCAL_MIN]
    )


def test_global_minimum_surface_and_stationary_attention_values():
    chain = MarkovChain(0.2, 0.3)
    e, w = np.array([0.5, 1.0, 2.0, 0.0]), np.array([0.3, -0.2, 1.0, 0.3])
    a = attention.global_min_scalar(chain, e, w)
    np.testing.assert_allclose(attention.gap(e[:3], w[:3], a[:3]), chain.optimal_gap, rtol=1e-12)
    assert np.isnan(a[3]) and a.dtype == float
    stationary = attention.stationary_scalar(np.array([0.0, 1.0, 2.0, -0.5]))
    assert stationary.dtype == float and np.isnan(stationary[0])
    np.testing.assert_allclose(stationary[1:], [-1.0, -0.25, -4.0], rtol=1e-15)
    assert attention.stationary_scalar(1).item() == -1.0


def test_global_minimum_surface_is_nan_without_floating_point_errors():
    """Where no surface exists (e = 0; at p + q = 1 also 0/0, D* = 0) the graph is NaN, silently,
    even for a caller that turns invalid operations into errors."""
    chain = MarkovChain(0.25, 0.75)
    with np.errstate(invalid="raise", divide="raise"):
        a = attention.global_min_scalar(chain, np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    assert np.isnan(a[0]) and a[1] == pytest.approx(-1.0)  # D* = 0: 1 + a e^2 = 0


def test_stationary_set_boundaries_at_an_exact_tolerance():
    """With tol = 2^-10 every distance below is exact in binary: |e| = tol is off the e = 0 plane
    (so on the stationary set), while |w - w_sad| = tol or |1 + a e^2| = tol is not within tol."""
    chain, tol = MarkovChain(0.9, 0.9), 2.0**-10
    labels = attention.classify_endpoint(
        chain,
        [tol, 1.0, 1.0, 1.0],
        [canonical.SADDLE_W, canonical.SADDLE_W + tol, canonical.SADDLE_W, canonical.SADDLE_W],
        [-(2.0**20), -1.0, -1.0 + tol, -1.0 + tol / 2],
        tol=tol,
    )
    assert list(labels) == [attention.STATIONARY, canonical.UNCONVERGED, canonical.UNCONVERGED, attention.STATIONARY]


@pytest.mark.parametrize("model, start", [(canonical, [1.0, 0.0]), (attention, [1.0, 0.0, 0.3])])
def test_the_clocked_flow_moves_along_the_invariant_plane_w_0(model, start):
    """On w = 0 the flow keeps w = 0 and, for p + q > 1 (Thm 2: w >= 0 lies in I_min), takes e to 0."""
    field = clocked_field(MarkovChain(0.9, 0.9), model.gap_derivatives)
    _, path = integrate_flow(field, np.array([start]), 50.0, method="DOP853", atol=1e-30)
    end = path[-1, 0]
    assert end[1] == 0.0 and abs(end[0]) < 0.1
