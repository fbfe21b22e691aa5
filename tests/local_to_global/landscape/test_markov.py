"""The Markov chain's loss F(D) and the canonical models' energies, from their definitions (fast)."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.landscape import canonical3d as attention
from replication.papers.local_to_global.markov import MarkovChain, binary_entropy

CHAINS = [MarkovChain(0.1, 0.1), MarkovChain(0.9, 0.9), MarkovChain(0.5, 0.8), MarkovChain(0.2, 0.3)]
IDS = [f"p={c.p},q={c.q}" for c in CHAINS]


def numerical_gradient(function, theta, step=1e-6):
    return np.array(
        [(function(*(theta + step * u)) - function(*(theta - step * u))) / (2 * step) for u in np.eye(len(theta))]
    )


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_stationary_distribution_and_entropies(chain):
    pi = np.array(chain.stationary)
    kernel = np.array([[1 - chain.p, chain.p], [chain.q, 1 - chain.q]])
    np.testing.assert_allclose(pi @ kernel, pi, rtol=1e-14)
    assert pi.sum() == pytest.approx(1.0) and chain.switching == pytest.approx(chain.p + chain.q)
    h = lambda x: -x * np.log(x) - (1 - x) * np.log(1 - x)  # noqa: E731
    assert chain.unigram_loss == pytest.approx(h(pi[1]), rel=1e-14)
    assert chain.bigram_loss == pytest.approx(pi[0] * h(chain.p) + pi[1] * h(chain.q), rel=1e-14)
    # The Bayes predictor's gap: logit P(1|1) - logit P(1|0).
    assert chain.optimal_gap == pytest.approx(np.log((1 - chain.q) / chain.q) - np.log(chain.p / (1 - chain.p)))


def test_binary_entropy_values_and_bad_chains():
    assert binary_entropy(0.5) == pytest.approx(np.log(2), rel=1e-15)
    assert binary_entropy(0.1) == pytest.approx(-(0.1 * np.log(0.1) + 0.9 * np.log(0.9)), rel=1e-15)
    for p, q in [(0.0, 0.5), (1.0, 0.5), (0.5, 0.0), (0.5, 1.0), (-0.1, 0.5)]:
        with pytest.raises(ValueError, match=f"p={p}, q={q}"):
            MarkovChain(p, q)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_optimal_offset_zeroes_the_derivative_in_the_offset(chain):
    """At c*(D) the expected residuals of both contexts balance: pi0 (s(c) - p) + pi1 (s(c + D) - (1 - q)) = 0."""
    pi0, pi1 = chain.stationary
    gaps = np.linspace(-10, 10, 41)
    c = chain.optimal_offset(gaps)
    residual = pi0 * (expit(c) - chain.p) + pi1 * (expit(c + gaps) - (1 - chain.q))
    np.testing.assert_allclose(residual, 0, atol=1e-13)
    assert chain.loss_of_gap(chain.optimal_gap) == pytest.approx(chain.bigram_loss, rel=1e-12)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_slope_is_the_derivative_of_the_loss(chain):
    gaps, step = np.linspace(-8, 8, 33), 1e-6
    numeric = (chain.loss_of_gap(gaps + step) - chain.loss_of_gap(gaps - step)) / (2 * step)
    np.testing.assert_allclose(chain.loss_slope(gaps), numeric, rtol=1e-6, atol=1e-10)
    assert chain.loss_slope(chain.optimal_gap) == pytest.approx(0, abs=1e-14)


@pytest.mark.parametrize("chain", CHAINS, ids=IDS)
def test_energy_is_constant_along_the_gradient_of_both_models(chain):
    """dE/dt = -grad E . grad L = 0 at every point off w = 0 (Lemma 1, and its 3-D form)."""
    rng = np.random.default_rng(4)
    for theta in rng.uniform(-1.5, 1.5, size=(20, 3)):
        theta[1] = np.copysign(max(abs(theta[1]), 0.1), theta[1])
        for model, point in ((canonical, theta[:2]), (attention, theta)):
            grad_energy = numerical_gradient(model.energy, point)
            grad_loss = np.array(model.gradient(chain, *point))
            scale = np.linalg.norm(grad_energy) * np.linalg.norm(grad_loss)
            assert abs(grad_energy @ grad_loss) <= 1e-7 * max(scale, 1e-12), (model.__name__, point)
            assert scale > 0
    # The attention scalar's term: E3 - E2 = -2 a^2 exactly.
    e, w, a = rng.uniform(-2, 2, size=(3, 50))
    np.testing.assert_allclose(attention.energy(e, w, a) - canonical.energy(e, w), -2 * a**2, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(canonical.energy(e, w), e**2 - w**2 - np.sign(w) * np.log(np.abs(w)), rtol=1e-13)


def test_no_floating_point_warnings_where_the_formulas_take_logs_of_zero_or_of_negatives():
    """p = q makes log|p - q| = -inf, w >= 0 leaves the separatrix undefined and e = 0 the stationary
    attention: the functions return their values (NaN outside the domain) without a warning."""
    gaps = np.array([-3.0, 0.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for chain in (MarkovChain(0.3, 0.3), MarkovChain(0.9, 0.9)):
            assert np.all(np.isfinite(chain.optimal_offset(gaps)))
            np.testing.assert_allclose(chain.optimal_offset(gaps), -gaps / 2, rtol=1e-12)  # p = q: c = -D/2
            assert np.all(np.isfinite(chain.loss_of_gap(gaps)))
        assert np.isnan(canonical.separatrix(np.array([0.0, 0.5]))).all()
        assert np.isnan(attention.stationary_scalar(np.array([0.0])))[0]
        assert np.isnan(attention.global_min_scalar(MarkovChain(0.2, 0.3), np.array([0.0]), np.array([0.3])))[0]


def test_integer_inputs_give_the_float_results():
    """Coordinates given as integers (large enough that integer squares would overflow int64)."""
    chain = MarkovChain(0.2, 0.3)
    e, w = np.array([4_000_000_000, 1]), np.array([3, -5_000_000_000])
    ef, wf = e.astype(float), w.astype(float)
    np.testing.assert_array_equal(canonical.energy(e, w), canonical.energy(ef, wf))
    np.testing.assert_array_equal(canonical.gap(e, w), canonical.gap(ef, wf))
    for got, want in zip(canonical.gradient(chain, e, w), canonical.gradient(chain, ef, wf)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(canonical.gap_derivatives(e, w), canonical.gap_derivatives(ef, wf)):
        np.testing.assert_array_equal(got, want)
    a = np.array([2, 3])
    np.testing.assert_array_equal(attention.gap(e, w, a), attention.gap(ef, wf, a.astype(float)))
    np.testing.assert_array_equal(attention.stationary_scalar(e), attention.stationary_scalar(ef))
    np.testing.assert_array_equal(canonical.separatrix(w), canonical.separatrix(wf))
    gaps = np.array([3_000_000_000, -3])
    np.testing.assert_array_equal(chain.loss_of_gap(gaps), chain.loss_of_gap(gaps.astype(float)))
    np.testing.assert_array_equal(chain.loss_slope(gaps), chain.loss_slope(gaps.astype(float)))
    np.testing.assert_array_equal(chain.loss_curvature(gaps), chain.loss_curvature(gaps.astype(float)))
