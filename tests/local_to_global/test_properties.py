"""Invariants of the mathematics of Local to Global, checked on inputs drawn by Hypothesis
(derandomised: the same examples on every run, so a failure reproduces)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import log_expit

from replication.papers.local_to_global.data import sample_sequences
from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.landscape.flow import integrate_flow
from replication.papers.local_to_global.markov import MarkovChain

FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None)

# Transition probabilities away from 0, 1 and the excluded line p + q = 1.
probability = st.floats(0.03, 0.97)


def chains():
    return (
        st.tuples(probability, probability)
        .filter(lambda pq: abs(pq[0] + pq[1] - 1) > 0.05)
        .map(lambda pq: MarkovChain(*pq))
    )


@pytest.mark.heavy
@FAST
@given(chain=chains(), e=st.floats(-1.5, 1.5), w=st.floats(0.05, 1.5) | st.floats(-1.5, -0.05))
def test_energy_is_conserved_along_flows(chain, e, w):
    """Lemma 1: E(e, w) = e^2 - w^2 - sign(w) log|w| is constant along the gradient flow."""
    t, path = integrate_flow(canonical.flow_gradient(chain), np.array([[e, w]]), 5.0, np.linspace(0, 5, 11))
    energy = canonical.energy(path[:, 0, 0], path[:, 0, 1])
    assert np.all(np.isfinite(energy))
    assert np.ptp(energy) <= 1e-7 * max(1.0, abs(energy[0]))
    # the loss never increases along a gradient flow
    losses = canonical.loss(chain, path[:, 0, 0], path[:, 0, 1])
    assert np.all(np.diff(losses) <= 1e-12)


@FAST
@given(chain=chains(), gap=st.floats(-6.0, 12.0))
def test_closed_form_offset_minimises_the_loss(chain, gap):
    """Lemma 5's c*(D) against a numerical minimisation of the population loss over the offset."""
    pi0, pi1 = chain.stationary
    p, q = chain.p, chain.q

    def loss(c):
        z1 = gap + c
        return -pi1 * ((1 - q) * log_expit(z1) + q * log_expit(-z1)) - pi0 * (
            p * log_expit(c) + (1 - p) * log_expit(-c)
        )

    numerical = minimize_scalar(loss, bracket=(-30.0, 0.0, 30.0), tol=1e-12).x
    closed = float(chain.optimal_offset(gap))
    assert abs(closed - numerical) < 1e-5 * max(1.0, abs(numerical))
    assert np.isclose(float(chain.loss_of_gap(gap)), loss(closed), rtol=1e-12, atol=1e-15)


@FAST
@given(chain=chains(), seed=st.integers(0, 2**31 - 1))
def test_sampled_chains_have_the_kernel_and_stationary_law(chain, seed):
    # a (20, 20) batch of sequences: the sampler's scans must run along the symbols' axis
    x = sample_sequences(chain, (20, 20), 200, torch.Generator().manual_seed(seed)).numpy()
    assert x.shape == (20, 20, 200) and set(np.unique(x)) <= {0, 1}
    previous, following = x[..., :-1].ravel(), x[..., 1:].ravel()
    after_zero, after_one = following[previous == 0], following[previous == 1]
    # 80 000 transitions: the empirical kernel within 5 binomial standard errors of (p, q)
    for observed, expected, count in (
        (after_zero.mean(), chain.p, len(after_zero)),
        (1 - after_one.mean(), chain.q, len(after_one)),
    ):
        assert abs(observed - expected) < 5 * np.sqrt(expected * (1 - expected) / count) + 1e-3
    # the first symbol is drawn from pi: 400 independent draws
    pi1 = chain.stationary[1]
    assert abs(x[..., 0].mean() - pi1) < 5 * np.sqrt(pi1 * (1 - pi1) / 400) + 1e-3


@FAST
@given(
    chain=chains(),
    e=st.floats(-1.2, 1.2),
    w=st.floats(0.05, 1.2) | st.floats(-1.2, -0.05),
    a=st.floats(-1.0, 1.0),
)
def test_energy_is_conserved_along_clocked_flows_in_two_and_three_dimensions(chain, e, w, a):
    """Lemma 1 and its 3-D form E = e^2 - w^2 - sign(w) log|w| - 2a^2, along the flows the basins
    are measured with (the clocked field: the same orbits, another clock)."""
    from replication.papers.local_to_global.landscape import canonical3d
    from replication.papers.local_to_global.landscape.flow import clocked_field

    for module, start in ((canonical, [e, w]), (canonical3d, [e, w, a])):
        field = clocked_field(chain, module.gap_derivatives)
        _, path = integrate_flow(field, np.array([start]), 20.0, np.linspace(0, 20, 6), method="DOP853", atol=1e-30)
        energy = module.energy(*np.moveaxis(path[:, 0], -1, 0))
        assert np.all(np.isfinite(energy))
        assert np.ptp(energy) <= 1e-8 * max(1.0, abs(energy[0]))
        losses = module.loss(chain, *np.moveaxis(path[:, 0], -1, 0))
        assert np.all(np.diff(losses) <= 1e-12)  # a gradient flow never climbs


def _population_loss(chain, logit_after):
    """Cross-entropy of the predictor with logit ``logit_after[x]`` after symbol x, over (X, Y) ~ (pi, P)."""
    pi0, pi1 = chain.stationary
    p, q = chain.p, chain.q
    z0, z1 = logit_after
    return -pi1 * ((1 - q) * log_expit(z1) + q * log_expit(-z1)) - pi0 * (p * log_expit(z0) + (1 - p) * log_expit(-z0))


@FAST
@given(
    chain=chains(),
    e=st.floats(-1.5, 1.5),
    w=st.floats(-1.5, 1.5),
    a=st.floats(-0.8, 0.8),
)
def test_loss_at_the_closed_form_bias_is_the_minimum_over_the_bias_of_the_paper_logits(chain, e, w, a):
    """The models' losses L(e, w) and L(e, w, a) (closed-form optimal bias, Lemma 5) against the
    cross-entropy of the paper's logits minimised over b numerically:
    z(x) = e^2 (1 + 2w|w|) x + b - e^2/2 (Sec. 2) and
    z(X) = e^2 [(X - 1/2)(1 + a e^2)(1 + 2w|w|) + w|w| |1 + a e^2|] + b (App. G)."""
    from replication.papers.local_to_global.landscape import canonical3d

    s = 1 + 2 * w * abs(w)

    def two_d(b):
        return _population_loss(chain, [b - e**2 / 2, e**2 * s + b - e**2 / 2])

    def three_d(b):
        u = 1 + a * e**2
        return _population_loss(
            chain, [e**2 * (-0.5 * u * s + w * abs(w) * abs(u)) + b, e**2 * (0.5 * u * s + w * abs(w) * abs(u)) + b]
        )

    for numerical, closed in (
        (two_d, canonical.loss(chain, e, w)),
        (three_d, canonical3d.loss(chain, e, w, a)),
    ):
        best = minimize_scalar(numerical, bracket=(-30.0, 0.0, 30.0), tol=1e-12)
        assert float(closed) == pytest.approx(best.fun, rel=1e-9, abs=1e-12)
        assert float(closed) <= best.fun + 1e-12  # the closed form is the minimum, not just near it
