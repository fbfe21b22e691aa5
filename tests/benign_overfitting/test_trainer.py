"""The exact Gram-matrix trainer against the direct d-dimensional gradient descent."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import shared_scope
from replication.papers.benign_overfitting import model
from replication.papers.benign_overfitting.data import head, sample_dataset
from replication.papers.benign_overfitting.model import softmax
from replication.papers.benign_overfitting.train import GramProblem, stack, train_gram


def _data(seed=0, d=200, signal_norm=20.0, n=20):
    rng = np.random.default_rng(seed)
    return sample_dataset(rng, n, 8, d, signal_norm, 0.2, 0.2)


@pytest.fixture(scope=shared_scope)
def runs():
    """2000 steps of both trainers on one data set (lr 1e-2 so that the run moves far from uniform)."""
    data = _data()
    nu = head(data.d, data.signal_norm)
    p, direct = model.train_direct(data.x, data.y.astype(float), nu, 1e-2, 2000, record_every=250)
    problem = GramProblem.from_data(data)
    gram = train_gram(problem.gram[None], problem.gamma[None], problem.y[None], 1e-2, 2000, record_every=250)
    return data, p, direct, problem, gram


def test_gram_matches_direct_after_2000_steps(runs):
    data, p, direct, _, gram = runs
    assert gram.trajectory[0].shape == direct.shape == (9, data.n, data.T)
    assert np.abs(gram.trajectory[0] - direct).max() < 1e-9
    assert np.abs(gram.final_s[0] - direct[-1]).max() < 1e-9
    # the run is far from uniform attention, so the agreement is not trivial
    assert direct[-1].max() > 0.5


def test_gram_coefficients_give_the_direct_parameter(runs):
    data, p, _, _, gram = runs
    p_gram = data.x.reshape(-1, data.d).T @ gram.a[0]
    assert np.allclose(p_gram, p, rtol=1e-9, atol=1e-12)


def test_batched_runs_equal_single_runs():
    problems = [GramProblem.from_data(_data(seed)) for seed in (1, 2, 3)]
    batch = train_gram(*stack(problems), 1e-3, 300)
    for k, problem in enumerate(problems):
        single = train_gram(*stack([problem]), 1e-3, 300)
        assert np.array_equal(batch.a[k], single.a[0])
        assert np.array_equal(batch.pair_sum[k], single.pair_sum[0])


def test_accumulators_match_recorded_probabilities():
    problem = GramProblem.from_data(_data(4, d=180))
    run = train_gram(*stack([problem]), 5e-3, 60, record_every=1)
    s = run.trajectory[0, :-1]  # scores before each update, steps 0..59
    pair = s * (1 - s)
    assert np.allclose(run.pair_sum[0], pair.sum(0), rtol=1e-12)
    assert np.allclose(run.first_q[0], pair[0].sum(-1)) and np.allclose(run.first_q[0], 7 / 8)
    assert np.allclose(run.last_q[0], pair[-1].sum(-1))


def test_analytic_gradient_equals_autograd():
    data = _data(5, d=60)
    nu = head(data.d, data.signal_norm)
    p = np.random.default_rng(6).normal(scale=0.05, size=data.d)
    x, y = torch.tensor(data.x), torch.tensor(data.y, dtype=torch.float64)
    p_t = torch.tensor(p, requires_grad=True)
    s = torch.softmax(x @ p_t, dim=-1)
    f = (s * (x @ torch.tensor(nu))).sum(-1)
    torch.log1p(torch.exp(-y * f)).mean().backward()
    analytic = model.gradient(data.x, data.y.astype(float), p, nu)
    assert np.allclose(analytic, p_t.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert np.abs(analytic).max() > 1e-4


def test_loss_at_uniform_attention():
    """p = 0 gives every clean sample f = mean_t gamma_t ~ 1/(8 sqrt 2): loss ~0.649 (spec section 5)."""
    data = sample_dataset(np.random.default_rng(7), 400, 8, 2000, 20.0, 0.2, 0.0)
    nu = head(data.d, data.signal_norm)
    assert model.loss(data.x, data.y.astype(float), np.zeros(data.d), nu) == pytest.approx(0.649, abs=0.004)


def test_direct_trainer_records_nothing_unless_asked():
    data = _data(seed=4, d=50, n=6)
    nu = head(data.d, data.signal_norm)
    p, records = model.train_direct(data.x, data.y.astype(float), nu, 1e-2, 30)
    assert records is None
    p_recorded, recorded = model.train_direct(data.x, data.y.astype(float), nu, 1e-2, 30, record_every=10)
    assert np.array_equal(p, p_recorded) and recorded.shape == (4, 6, 8)


def _gram_loss(problem, a):
    """The mean logistic loss written out in the span form: logits K a, softmax per sample."""
    n, T = problem.gamma.shape
    z = (problem.gram @ a).reshape(n, T)
    s = np.exp(z - z.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    f = (s * problem.gamma).sum(-1)
    return np.mean(np.log1p(np.exp(-problem.y * f)))


def test_first_step_from_uniform_attention_by_hand():
    """From a = 0 every s_it = 1/T and f_i = mean_t gamma_it, so one step gives
    a_it = lr y_i (gamma_it - f_i) / (T n (1 + e^{y_i f_i})): the 1/n of the mean loss, worked out."""
    problem = GramProblem.from_data(_data(8, d=30, n=5))
    lr = 0.3
    run = train_gram(*stack([problem]), lr, 1)
    n, T = problem.gamma.shape
    expected = np.zeros(n * T)
    for i in range(n):
        f = problem.gamma[i].mean()
        for t in range(T):
            expected[i * T + t] = (
                lr * problem.y[i] * (problem.gamma[i, t] - f) / (T * n * (1 + np.exp(problem.y[i] * f)))
            )
    assert np.allclose(run.a[0], expected, rtol=1e-12, atol=0)
    assert np.allclose(run.final_s[0], softmax((problem.gram @ expected).reshape(n, T)), rtol=1e-12)


def test_a_duplicated_data_set_trains_the_same_parameter():
    """The loss is a mean over samples: every sample twice is the same loss, so the same p. The
    coefficients split evenly between the two copies of each token (p = X^T a)."""
    problem = GramProblem.from_data(_data(9, d=40, n=6))
    twice = GramProblem(
        gram=np.block([[problem.gram, problem.gram], [problem.gram, problem.gram]]),
        gamma=np.concatenate([problem.gamma, problem.gamma]),
        coords=np.concatenate([problem.coords, problem.coords]),
        y=np.concatenate([problem.y, problem.y]),
    )
    once, doubled = (train_gram(*stack([p]), 0.05, 200) for p in (problem, twice))
    N = problem.gram.shape[0]
    assert np.allclose(doubled.a[0, :N], doubled.a[0, N:], rtol=1e-12)
    assert np.allclose(doubled.a[0, :N] + doubled.a[0, N:], once.a[0], rtol=1e-9, atol=1e-15)
    assert np.allclose(doubled.final_s[0, :6], once.final_s[0], rtol=1e-10)
    assert np.abs(once.final_s[0] - 1 / 8).max() > 0.05  # far from the start


@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(
    d=st.integers(6, 60),
    n=st.integers(2, 9),
    T=st.integers(3, 7),
    seed=st.integers(0, 2**31 - 1),
    lr=st.sampled_from([1e-3, 1e-2, 1e-1]),
    steps=st.integers(0, 40),
)
def test_each_step_is_lr_times_the_loss_gradient(d, n, T, seed, lr, steps):
    """A gradient step moves p by -lr grad L, so along the step delta (in coefficients) the
    directional derivative of the mean loss is grad L . X^T delta = -delta^T K delta / lr. Checked by
    a central finite difference of the loss written out above: a wrong 1/n (or lr) scales one side."""
    data = sample_dataset(np.random.default_rng(seed), n, T, d, 5.0, 0.2, 0.25)
    problem = GramProblem.from_data(data)
    before = train_gram(*stack([problem]), lr, steps).a[0]
    delta = train_gram(*stack([problem]), lr, steps + 1).a[0] - before
    h = 1e-3 / np.sqrt(delta @ problem.gram @ delta)  # a step of 1e-3 in |p|
    slope = (_gram_loss(problem, before + h * delta) - _gram_loss(problem, before - h * delta)) / (2 * h)
    expected = -(delta @ problem.gram @ delta) / lr
    assert slope == pytest.approx(expected, rel=1e-5)


def test_softmax_rows_on_any_batch_shape_and_scale():
    """Each row of the last axis on its own: a batch of runs (3-D) and rows whose logits lie
    1000 apart (a shift by the global maximum would underflow the lower rows)."""
    from scipy.special import softmax as reference

    z = np.random.default_rng(0).normal(size=(2, 3, 4)) * 3
    z[1, 2] += 1000.0
    z[0, 1] -= 800.0
    s = softmax(z)
    assert np.allclose(s, reference(z, axis=-1), rtol=1e-12, atol=0)
    assert np.allclose(s.sum(-1), 1.0, rtol=1e-14)


def test_evaluate_by_hand():
    """u = 0: uniform attention, f = mean_t g_t. Margins y f in (0, 1) and below 0."""
    from replication.papers.benign_overfitting.train import evaluate

    g = np.array([[[0.4, 0.2], [0.1, -0.5], [0.9, 0.7]], [[-0.4, -0.2], [0.3, 0.1], [1.5, 0.5]]])
    y = np.array([[1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]])
    margins = y * g.mean(-1)  # [[0.3, -0.2, -0.8], [0.3, 0.2, 1.0]]
    loss, accuracy = evaluate(np.zeros_like(g), g, y)
    assert loss.shape == accuracy.shape == (2,)
    assert np.allclose(loss, np.log1p(np.exp(-margins)).mean(-1), rtol=1e-12)
    assert np.allclose(accuracy, [1 / 3, 1.0])
    # logits far apart select one token: f = g of the chosen token
    u = np.zeros_like(g)
    u[..., 1] = 50.0
    loss, accuracy = evaluate(u, g, y)
    assert np.allclose(loss, np.log1p(np.exp(-y * g[..., 1])).mean(-1), rtol=1e-12)
    assert np.allclose(accuracy, [1 / 3, 1.0])


def test_train_gram_returns_no_trajectory_unless_asked():
    problem = GramProblem.from_data(_data(3, d=30, n=4))
    run = train_gram(*stack([problem]), 1e-2, 12)
    assert run.trajectory is None and run.record_steps is None and run.steps == 12
    recorded = train_gram(*stack([problem]), 1e-2, 12, record_every=5)
    np.testing.assert_array_equal(recorded.record_steps, [0, 5, 10, 12])
    assert recorded.trajectory.shape == (1, 4, 4, 8) and recorded.steps == 12
    assert np.array_equal(recorded.a, run.a) and np.array_equal(recorded.pair_sum, run.pair_sum)


def test_train_gram_takes_labels_and_head_values_of_any_precision():
    """Inputs are converted to float64 before the compiled kernel (which takes no half precision):
    integer or half-precision labels, half-precision head values and a float32 Gram matrix train
    exactly as the float64 arrays of the same values."""
    problem = GramProblem.from_data(_data(3, d=30, n=4))
    gram32, gamma16 = problem.gram.astype(np.float32), problem.gamma.astype(np.float16)
    reference = train_gram(gram32.astype(float)[None], gamma16.astype(float)[None], problem.y[None], 1e-2, 20)
    for labels in (problem.y.astype(int), problem.y.astype(np.float16)):
        run = train_gram(gram32[None], gamma16[None], labels[None], 1e-2, 20)
        assert np.array_equal(run.a, reference.a) and np.array_equal(run.final_s, reference.final_s)
