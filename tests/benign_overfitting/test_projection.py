"""Test-set projection sampling against a materialised test set (exact in distribution)."""

import numpy as np
import pytest
from scipy import stats

from helpers import shared_scope
from replication.papers.benign_overfitting.data import head, sample_dataset
from replication.papers.benign_overfitting.model import softmax
from replication.papers.benign_overfitting.train import (
    GramProblem,
    evaluate,
    materialise_test_set,
    outputs,
    project_test_set,
    stack,
    train_gram,
)


@pytest.fixture(scope=shared_scope)
def trained():
    """A trained p far from 0 (so both projections matter), from a small benign-looking run."""
    d, norm = 300, 10.0
    data = sample_dataset(np.random.default_rng(0), 20, 8, d, norm, 0.2, 0.2)
    problem = GramProblem.from_data(data)
    run = train_gram(*stack([problem]), 2e-2, 400)
    p = data.x.reshape(-1, d).T @ run.a[0]
    return data, problem, run.a[0], p, head(d, norm), norm


def test_projection_matches_materialised_test_set(trained):
    data, problem, a, p, nu, norm = trained
    m = 4000
    u, g, y = project_test_set(np.random.default_rng(1), a, problem, norm, m, 8, 0.2)
    u_ref, g_ref, y_ref = materialise_test_set(np.random.default_rng(2), p, nu, norm, m, 8, 0.2)
    for token in (0, 1, 2, 5):
        for label in (1, -1):
            for ours, ref in ((u, u_ref), (g, g_ref)):
                result = stats.ks_2samp(ours[y == label, token], ref[y_ref == label, token])
                assert result.pvalue > 1e-3, (token, label, result)
    f, f_ref = y * outputs(softmax(u), g), y_ref * outputs(softmax(u_ref), g_ref)
    assert stats.ks_2samp(f, f_ref).pvalue > 1e-3
    loss, acc = evaluate(u, g, y)
    loss_ref, acc_ref = evaluate(u_ref, g_ref, y_ref)
    per_sample = np.logaddexp(0, -f_ref)
    assert abs(loss - loss_ref) < 4 * np.sqrt(2 / m) * per_sample.std()
    assert abs(acc - acc_ref) < 4 * np.sqrt(2 * acc_ref * (1 - acc_ref) / m) + 1e-3


def test_projection_covariance_is_exact(trained):
    """The joint covariance of (eps.p, eps.nu) from the Gram matrix equals the d-dimensional one."""
    data, problem, a, p, nu, norm = trained
    assert np.isclose(a @ problem.gram @ a, p @ p, rtol=1e-10)
    assert np.isclose(a @ problem.gamma.ravel(), p @ nu, rtol=1e-10)
    assert np.allclose(problem.coords.T @ a, p[:2], rtol=1e-10)


def test_projection_at_p_zero_is_uniform_attention():
    data = sample_dataset(np.random.default_rng(3), 4, 8, 200, 5.0, 0.2, 0.2)
    problem = GramProblem.from_data(data)
    u, g, y = project_test_set(np.random.default_rng(4), np.zeros(32), problem, 5.0, 50, 8, 0.2)
    assert not u.any() and np.isfinite(g).all()


@pytest.mark.parametrize("draw", ["project", "materialise"])
def test_the_paper_noise_model_shuffles_the_weak_tokens_of_the_test_set(draw, trained):
    """Head values g = nu.x of token 1 for label +1: rho/sqrt 2 (aligned) or -rho/sqrt 2 (opposite),
    plus noise of sd 1/||mu|| = 0.1. The authors' model always has the aligned one at token 1, the
    paper's puts either there."""
    data, problem, a, p, nu, norm = trained
    means = {}
    for noise in ("exact", "bernoulli"):
        rng = np.random.default_rng(5)
        if draw == "project":
            u, g, y = project_test_set(rng, a, problem, norm, 400, 8, 0.2, noise)
        else:
            u, g, y = materialise_test_set(rng, p, nu, norm, 400, 8, 0.2, noise)
        weak = g[y == 1, 1]
        means[noise] = (weak > 0).mean()
    assert means["exact"] > 0.9
    assert 0.3 < means["bernoulli"] < 0.7


def _residual_moments(a, problem, p, nu, norm, m=3000, T=8, rho=0.2):
    """Draw m test sequences by projection and remove each token's signal part (worked out from the
    data model: u = ||mu|| c.p[:2] + eps.p, g = (c_0 - c_1)/sqrt 2 + eps.nu for the token's signal
    coefficients c). Returns the residuals' mean and covariance and the covariance they should have."""
    from replication.papers.benign_overfitting.data import sample_roles, signal_coefficients

    u, g, y = project_test_set(np.random.default_rng(9), a, problem, norm, m, T, rho)
    coef = signal_coefficients(y.astype(int), sample_roles(None, m, T), rho)
    ru = (u - norm * (coef @ p[:2])).ravel()
    rg = (g - (coef[..., 0] - coef[..., 1]) / np.sqrt(2.0)).ravel()
    expected = np.array([[p @ p, p @ nu], [p @ nu, nu @ nu]])
    return np.array([ru.mean(), rg.mean()]), np.cov(ru, rg), expected, ru.size


@pytest.mark.parametrize("kind", ["trained", "along the head", "short", "zero"])
def test_projected_tokens_have_the_joint_law_of_x_p_and_x_nu(kind, trained):
    """The noise parts (eps.p, eps.nu) are jointly Gaussian with covariance [[|p|^2, p.nu], [p.nu,
    |nu|^2]], computed here from the d-dimensional p and nu. "along the head": p = X^T K^-1 gamma, the
    projection of nu onto the training tokens, strongly correlated with nu; "short": the same scaled
    to |p| = 0.5 (the Cholesky factor below 1)."""
    data, problem, a, p, nu, norm = trained
    if kind != "trained":
        a = np.linalg.solve(problem.gram, problem.gamma.ravel())
        if kind == "short":
            a *= 0.5 / np.sqrt(a @ problem.gram @ a)
        if kind == "zero":  # p = 0: u = 0 exactly, g = signal + eps.nu
            a *= 0.0
        p = data.x.reshape(-1, data.d).T @ a
    mean, cov, expected, count = _residual_moments(a, problem, p, nu, norm)
    sd = np.sqrt(np.diag(expected))
    correlation = expected[0, 1] / (sd[0] * sd[1]) if sd[0] > 0 else 0.0
    if kind in ("along the head", "short"):
        assert correlation > 0.5  # the case tells a wrong or missing correlation apart
    assert np.all(np.abs(mean) <= 5 * sd / np.sqrt(count))
    # sampling sd of a covariance entry: sqrt((s_ii s_jj + s_ij^2) / count)
    tolerance = 5 * np.sqrt((np.outer(sd**2, sd**2) + expected**2) / count)
    assert np.all(np.abs(cov - expected) <= tolerance), (cov, expected)


@pytest.mark.parametrize("noise", ["exact", "bernoulli"])
def test_projection_draws_the_sequences_of_the_materialised_draw(noise, trained):
    """From one seed, the projection and the d-dimensional draw take the same labels and token roles
    from the stream (then their noise differs): the labels agree, and so does which weak token sits
    at position 1, read off the sign of its head value (+-rho/sqrt 2 = +-0.14 against noise of sd
    1/||mu|| = 1e-4; p = 0 so that only eps.nu is noise)."""
    data, problem, a, p, nu, norm = trained
    big = 1e4
    u, g, y = project_test_set(np.random.default_rng(12), np.zeros_like(a), problem, big, 300, 8, 0.2, noise)
    u_ref, g_ref, y_ref = materialise_test_set(
        np.random.default_rng(12), np.zeros_like(p), nu * norm / big, big, 300, 8, 0.2, noise
    )
    assert np.array_equal(y, y_ref)
    assert np.array_equal(np.sign(g[:, :3]), np.sign(g_ref[:, :3]))
    assert np.all(np.abs(g[:, :3]) > 0.1)
    if noise == "bernoulli":
        assert 0.3 < (y * g[:, 1] > 0).mean() < 0.7
