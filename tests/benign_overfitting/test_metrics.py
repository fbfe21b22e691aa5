"""Eqs. 9 and 10, as defined and as coded, on hand-made cases and against the authors' loop."""

import warnings

import numpy as np

from replication.papers.benign_overfitting import metrics
from replication.papers.benign_overfitting.data import sample_dataset
from replication.papers.benign_overfitting.train import GramProblem, stack, train_gram


def test_as_defined_on_a_hand_made_case():
    # 4 samples, 3 tokens: clean +1 (0, 1), clean -1 (2), noisy (3)
    pair_sum = np.array(
        [
            [2.0, 1.0, 0.5],
            [4.0, 0.5, 0.5],
            [3.0, 1.0, 1.0],
            [1.0, 8.0, 0.0],  # the largest accumulation is a noisy sample's token
        ]
    )
    clean = np.array([True, True, True, False])
    y = np.array([1, 1, -1, 1])
    # class sums of accumulated S (token 0): +1 -> 6, -1 -> 3; RHS = 8
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, y), 3 / 8)
    # normalised balance: (6 / 2) / (3 / 1)
    assert np.isclose(metrics.eq10_ratio(pair_sum, clean, y), 1.0)
    assert np.isclose(metrics.S(np.array([[0.5, 0.5]])), 0.25)


def test_as_defined_on_an_asymmetric_case():
    # accumulated S (token 0): clean +1 -> 2, 6, 1 (mean 3); clean -1 -> 4 (mean 4); a noisy sample and a
    # larger non-relevant accumulation (9) on a clean sample
    pair_sum = np.array(
        [
            [2.0, 9.0],
            [6.0, 0.5],
            [1.0, 0.5],
            [4.0, 1.0],
            [5.0, 0.0],
        ]
    )
    clean = np.array([True, True, True, True, False])
    y = np.array([1, 1, 1, -1, -1])
    assert np.isclose(metrics.eq10_ratio(pair_sum, clean, y), 3 / 4)
    assert np.isclose(metrics.eq10_ratio(pair_sum, clean, -y), 4 / 3)  # class swap: the reciprocal
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, y), min(9.0, 4.0) / 9.0)
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, -y), 4 / 9)


def test_eq9_when_the_plus_class_is_the_smaller_and_the_max_is_a_relevant_token():
    # clean +1: samples 1, 3 (accumulated S 1 + 2 = 3); clean -1: samples 0, 2 (7 + 5 = 12); noisy: 4.
    # The largest accumulation of any token is a clean sample's relevant token (7, sample 0).
    pair_sum = np.array(
        [
            [7.0, 0.5, 1.0],
            [1.0, 6.0, 0.5],
            [5.0, 0.5, 0.5],
            [2.0, 1.0, 3.0],
            [0.5, 6.5, 0.0],
        ]
    )
    clean = np.array([True, True, True, True, False])
    y = np.array([-1, 1, -1, 1, 1])
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, y), 3 / 7)
    # the noisy sample's relevant token counts for neither class, however large
    pair_sum[4, 0] = 6.9
    assert np.isclose(metrics.eq9_ratio(pair_sum, clean, y), 3 / 7)
    # a class with no clean sample has an empty sum: the condition fails (ratio 0)
    assert metrics.eq9_ratio(pair_sum, clean & (y == -1), y) == 0.0
    assert np.isclose(metrics.eq10_ratio(pair_sum, clean, y), (3 / 2) / (12 / 2))


def test_S_reads_the_relevant_token():
    s = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    assert np.allclose(metrics.relevance(s), [0.7, 0.1])
    assert np.allclose(metrics.S(s), [0.7 * 0.3, 0.1 * 0.9])


def test_a_missing_class_gives_nan_without_warnings():
    """A grid cell whose clean samples are all of one class: Eq. 10 is 0/0, NaN, silently."""
    pair_sum = np.array([[2.0, 1.0], [3.0, 1.0]])
    clean, y = np.array([True, True]), np.array([1, 1])
    first_q = np.array([0.5, 0.25])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(metrics.eq10_ratio(pair_sum, clean, y))
        assert np.isnan(metrics.eq10_ratio(pair_sum, ~clean, y))
        assert np.isnan(metrics.eq10_ratio_as_coded(first_q, clean, y))
        assert np.isnan(metrics.eq10_ratio_as_coded_last(pair_sum, first_q, clean, y))


def _authors_loop(trajectory, clean, y):
    """The authors' v1 logging: one running sum over (step, sample, token) rows; per step and
    class, the sum over clean samples of the running sum read after the sample's rows."""
    running = 0.0
    per_step, biggest = [], 0.0
    for s in trajectory:  # scores before each update
        plus = minus = 0.0
        for i in range(s.shape[0]):
            for t in range(s.shape[1]):
                running += s[i, t] * (1.0 - s[i, t])
                biggest = max(biggest, running)
            if clean[i] and y[i] == 1:
                plus += running
            if clean[i] and y[i] == -1:
                minus += running
        per_step.append((plus, minus))
    return per_step, biggest


def test_as_coded_matches_the_authors_loop():
    data = sample_dataset(np.random.default_rng(0), 20, 8, 200, 10.0, 0.2, 0.2)
    problem = GramProblem.from_data(data)
    run = train_gram(*stack([problem]), 1e-2, 40, record_every=1)
    clean, y = ~data.noisy, data.y
    per_step, biggest = _authors_loop(run.trajectory[0, :-1], clean, y)
    plus_n, minus_n = (clean & (y == 1)).sum(), (clean & (y == -1)).sum()
    last_plus, last_minus = per_step[-1]
    assert np.isclose(
        metrics.eq9_ratio_as_coded(run.pair_sum[0], run.last_q[0], clean, y),
        min(last_plus, last_minus) / biggest,
        rtol=1e-12,
    )
    first_plus, first_minus = per_step[0]
    assert np.isclose(
        metrics.eq10_ratio_as_coded(run.first_q[0], clean, y),
        (first_plus / plus_n) / (first_minus / minus_n),
        rtol=1e-12,
    )
    assert np.isclose(
        metrics.eq10_ratio_as_coded_last(run.pair_sum[0], run.last_q[0], clean, y),
        (last_plus / plus_n) / (last_minus / minus_n),
        rtol=1e-12,
    )
    # what the published images show: the smaller clean-class size, a ratio of mean sample indices
    index = np.arange(1, 21)
    assert np.isclose(
        metrics.eq10_ratio_as_coded(run.first_q[0], clean, y),
        index[clean & (y == 1)].mean() / index[clean & (y == -1)].mean(),
    )
    assert abs(metrics.eq9_ratio_as_coded(run.pair_sum[0], run.last_q[0], clean, y) - min(plus_n, minus_n)) < 0.5


def test_as_defined_differs_from_as_coded():
    data = sample_dataset(np.random.default_rng(1), 20, 8, 500, 20.0, 0.2, 0.2)
    problem = GramProblem.from_data(data)
    run = train_gram(*stack([problem]), 1e-3, 500)
    clean, y = ~data.noisy, data.y
    defined = metrics.eq9_ratio(run.pair_sum[0], clean, y)
    coded = metrics.eq9_ratio_as_coded(run.pair_sum[0], run.last_q[0], clean, y)
    assert not np.isclose(defined, coded, rtol=1e-2)


def test_batched_runs_give_each_run_its_own_value():
    """The grid evaluates many runs at once: (B, n, T) inputs give B values, each its run's."""
    rng = np.random.default_rng(7)
    pair_sum = rng.uniform(0.1, 5.0, (3, 6, 4))
    last_q, first_q = rng.uniform(0.1, 1.0, (3, 6)), rng.uniform(0.1, 1.0, (3, 6))
    clean = np.array([[True] * 6, [True, True, False, True, True, True], [True, False, True, True, False, True]])
    y = np.array([[1, -1, 1, -1, 1, 1], [1, 1, -1, -1, 1, -1], [-1, 1, 1, -1, -1, 1]])
    functions = {
        "eq9": lambda k: metrics.eq9_ratio(pair_sum[k], clean[k], y[k]),
        "eq10": lambda k: metrics.eq10_ratio(pair_sum[k], clean[k], y[k]),
        "eq9_coded": lambda k: metrics.eq9_ratio_as_coded(pair_sum[k], last_q[k], clean[k], y[k]),
        "eq10_coded": lambda k: metrics.eq10_ratio_as_coded(first_q[k], clean[k], y[k]),
        "eq10_coded_last": lambda k: metrics.eq10_ratio_as_coded_last(pair_sum[k], last_q[k], clean[k], y[k]),
    }
    batched = {
        "eq9": metrics.eq9_ratio(pair_sum, clean, y),
        "eq10": metrics.eq10_ratio(pair_sum, clean, y),
        "eq9_coded": metrics.eq9_ratio_as_coded(pair_sum, last_q, clean, y),
        "eq10_coded": metrics.eq10_ratio_as_coded(first_q, clean, y),
        "eq10_coded_last": metrics.eq10_ratio_as_coded_last(pair_sum, last_q, clean, y),
    }
    for name, single in functions.items():
        assert batched[name].shape == (3,), name
        assert np.allclose(batched[name], [single(k) for k in range(3)], rtol=1e-12), name
        assert len(set(np.round(batched[name], 12))) == 3, name  # the runs differ


def test_a_class_with_zero_accumulation_gives_inf_without_warnings():
    """x / 0 with x > 0: the balance is infinite, and said so without a division warning."""
    y, clean = np.array([-1, 1, 1]), np.array([True, True, True])
    pair_sum = np.array([[0.0, 0.0], [0.5, 0.0], [0.25, 0.0]])
    q = np.array([0.0, 0.5, 0.25])  # the -1 sample comes first and adds nothing to the running sum
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isposinf(metrics.eq10_ratio(pair_sum, clean, y))
        assert np.isposinf(metrics.eq10_ratio_as_coded(q, clean, y))
        assert np.isposinf(metrics.eq10_ratio_as_coded_last(pair_sum, q, clean, y))
