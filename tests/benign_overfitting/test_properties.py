"""Invariants of the mathematics of Benign overfitting, checked on inputs drawn by Hypothesis
(derandomised: the same examples on every run, so a failure reproduces)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from replication.papers.benign_overfitting import metrics, model
from replication.papers.benign_overfitting.data import head, sample_dataset
from replication.papers.benign_overfitting.train import GramProblem, stack, train_gram

FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None)


@settings(max_examples=6, deadline=None, derandomize=True, database=None)
@given(
    d=st.integers(8, 40),
    n=st.integers(4, 10),
    T=st.integers(3, 6),
    seed=st.integers(0, 2**31 - 1),
    lr=st.sampled_from([1e-3, 1e-2, 5e-2]),
)
def test_gram_trainer_equals_direct_trainer(d, n, T, seed, lr):
    data = sample_dataset(np.random.default_rng(seed), n, T, d, 5.0, 0.2, 0.25)
    nu = head(data.d, data.signal_norm)
    p, direct = model.train_direct(data.x, data.y.astype(float), nu, lr, 60, record_every=20)
    problem = GramProblem.from_data(data)
    gram = train_gram(*stack([problem]), lr, 60, record_every=20)
    assert np.abs(gram.trajectory[0] - direct).max() < 1e-10
    assert np.allclose(data.x.reshape(-1, data.d).T @ gram.a[0], p, rtol=1e-9, atol=1e-12)


def _accumulations():
    """A positive (n, T) table of time sums, labels with both classes clean at least once."""
    return (
        st.integers(4, 9)
        .flatmap(
            lambda n: st.tuples(
                st.lists(st.lists(st.floats(0.01, 10.0), min_size=3, max_size=3), min_size=n, max_size=n),
                st.lists(st.booleans(), min_size=n, max_size=n),
                st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n),
                st.permutations(range(n)),
            )
        )
        .map(lambda t: (np.array(t[0]), np.array(t[1]), np.array(t[2]), np.array(t[3])))
    )


def _both_classes(clean, y):
    clean = clean.copy()
    clean[:2] = True
    y = y.copy()
    y[0], y[1] = 1, -1
    return clean, y


@FAST
@given(_accumulations())
def test_eq9_eq10_under_class_swap_and_permutation(case):
    pair_sum, clean, y, order = case
    clean, y = _both_classes(clean, y)
    eq9, eq10 = metrics.eq9_ratio(pair_sum, clean, y), metrics.eq10_ratio(pair_sum, clean, y)
    # swapping the classes: min is symmetric, the balance becomes its reciprocal
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, -y), eq9, rtol=1e-12)
    assert np.isclose(metrics.eq10_ratio(pair_sum, clean, -y), 1.0 / eq10, rtol=1e-12)
    # the samples' order does not matter
    assert np.isclose(metrics.eq9_ratio(pair_sum[order], clean[order], y[order]), eq9, rtol=1e-12)
    assert np.isclose(metrics.eq10_ratio(pair_sum[order], clean[order], y[order]), eq10, rtol=1e-12)
    # against the formulas written out with Python loops
    plus = [pair_sum[i, 0] for i in range(len(y)) if clean[i] and y[i] == 1]
    minus = [pair_sum[i, 0] for i in range(len(y)) if clean[i] and y[i] == -1]
    assert np.isclose(eq9, min(sum(plus), sum(minus)) / pair_sum.max(), rtol=1e-12)
    assert np.isclose(eq10, (sum(plus) / len(plus)) / (sum(minus) / len(minus)), rtol=1e-12)
