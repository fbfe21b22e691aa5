"""The data model: exact label flips, token roles by position, seeds, Gram-matrix sampling."""

import math

import numpy as np
import pytest
from scipy import stats

from replication.papers.benign_overfitting.data import (
    IRRELEVANT,
    RELEVANT,
    WEAK_ALIGNED,
    WEAK_OPPOSITE,
    GramData,
    cell_seed,
    head,
    sample_dataset,
    sample_gram_data,
    train_test_generators,
)


@pytest.mark.parametrize("n, eta", [(20, 0.2), (7, 0.1), (33, 0.35), (10, 0.0)])
def test_exactly_ceil_n_eta_labels_flipped(n, eta):
    for seed in range(5):
        data = sample_dataset(np.random.default_rng(seed), n, 8, 10, 5.0, 0.2, eta)
        assert data.noisy.sum() == math.ceil(n * eta)
        assert np.array_equal(data.y, np.where(data.noisy, -data.clean_y, data.clean_y))


def test_token_roles_are_fixed_by_position():
    # a huge ||mu|| makes the noise negligible next to the signal
    norm, rho = 1e7, 0.2
    data = sample_dataset(np.random.default_rng(0), 50, 8, 6, norm, rho, 0.2)
    assert (data.roles[:, 0] == RELEVANT).all() and (data.roles[:, 1] == WEAK_ALIGNED).all()
    assert (data.roles[:, 2] == WEAK_OPPOSITE).all() and (data.roles[:, 3:] == IRRELEVANT).all()
    own = np.where(data.clean_y == 1, 0, 1)  # axis of mu_{Y*}: e_0 for +1, e_1 for -1
    rows = np.arange(data.n)
    coords = data.x[..., :2] / norm
    assert np.allclose(coords[rows, 0, own], 1, atol=1e-5) and np.allclose(coords[rows, 0, 1 - own], 0, atol=1e-5)
    assert np.allclose(coords[rows, 1, own], rho, atol=1e-5) and np.allclose(coords[rows, 2, 1 - own], rho, atol=1e-5)
    assert np.allclose(coords[:, 3:], 0, atol=1e-5)
    # the signal follows the clean label, not the flipped one
    assert data.noisy.any()


def test_bernoulli_variant():
    flips = [sample_dataset(np.random.default_rng(s), 40, 8, 4, 1e7, 0.2, 0.25, noise="bernoulli") for s in range(40)]
    counts = np.array([d.noisy.sum() for d in flips])
    assert len(set(counts)) > 3  # not a fixed number
    assert abs(counts.mean() - 10) < 1.5  # Binomial(40, 0.25)
    data = flips[0]
    swapped = data.roles[:, 1] == WEAK_OPPOSITE
    assert swapped.any() and (~swapped).any()
    own = np.where(data.clean_y == 1, 0, 1)
    aligned = np.argmax(data.roles == WEAK_ALIGNED, axis=1)
    assert np.allclose(data.x[np.arange(data.n), aligned, own] / 1e7, 0.2, atol=1e-5)
    with pytest.raises(ValueError, match="noise"):
        sample_dataset(np.random.default_rng(0), 4, 8, 4, 1.0, 0.2, 0.2, noise="gaussian")


def test_seeds_are_reproducible_and_per_cell():
    def draw(seed, d, m):
        train, test = train_test_generators(cell_seed(seed, d, m))
        return sample_dataset(train, 5, 8, d, m, 0.2, 0.2), sample_dataset(test, 5, 8, d, m, 0.2, 0.0)

    (a_train, a_test), (b_train, _) = draw(1, 30, 5.0), draw(1, 30, 5.0)
    assert np.array_equal(a_train.x, b_train.x) and np.array_equal(a_train.y, b_train.y)
    assert not np.allclose(a_train.x, a_test.x)  # the test set is its own draw
    assert not np.allclose(a_train.x, draw(1, 30, 10.0)[0].x)  # another cell
    assert not np.allclose(a_train.x, draw(2, 30, 5.0)[0].x)  # another seed
    assert a_test.noisy.sum() == 0


def test_head_is_the_normalised_signal_difference():
    nu = head(10, 4.0)
    assert np.isclose(np.linalg.norm(nu), 1 / 4.0)
    assert nu[0] > 0 and np.isclose(nu[1], -nu[0]) and not nu[2:].any()


def test_wishart_gram_sampling_matches_materialised_tokens():
    """Bartlett-sampled K = X X^T has the distribution of the materialised one (KS tests)."""
    n, T, d, draws = 4, 4, 40, 1500
    rng_a, rng_b = np.random.default_rng(10), np.random.default_rng(11)
    fast = [sample_gram_data(rng_a, n, T, d, 3.0, 0.2, 0.25) for _ in range(draws)]
    slow = [GramData.from_tokens(sample_dataset(rng_b, n, T, d, 3.0, 0.2, 0.25)) for _ in range(draws)]

    def entries(batch, i, j, relevant):
        # tokens i, j of sample 0, conditioned on its clean label so the signal part is comparable
        return np.array([b.gram[i, j] for b in batch if (b.clean_y[0] == 1) == relevant])

    for i, j in [(0, 0), (1, 1), (3, 3), (0, 1), (0, 5), (2, 14)]:
        for relevant in (True, False):
            a, b = entries(fast, i, j, relevant), entries(slow, i, j, relevant)
            assert stats.ks_2samp(a, b).pvalue > 1e-3, (i, j, relevant)
    assert np.allclose(fast[0].gram, fast[0].gram.T)
    assert abs(np.mean([b.gram[5, 5] for b in fast]) - d) < 1.0
