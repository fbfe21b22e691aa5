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
    sample_labels,
    sample_roles,
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


def test_clean_labels_are_plus_minus_one_in_even_shares():
    labels = np.concatenate([sample_labels(np.random.default_rng(s), 50, 0.2)[0] for s in range(20)])
    assert set(np.unique(labels)) == {-1, 1}
    # 1000 fair draws: the share of +1 within 5 binomial standard errors of 1/2
    assert abs((labels == 1).mean() - 0.5) < 5 * np.sqrt(0.25 / len(labels))


def test_sample_labels_and_roles_default_to_the_authors_model():
    clean_y, noisy = sample_labels(np.random.default_rng(0), 30, 0.2)
    assert noisy.dtype == bool and noisy.sum() == 6  # exactly ceil(30 * 0.2)
    roles = sample_roles(np.random.default_rng(0), 30, 8)
    assert (roles[:, 1] == WEAK_ALIGNED).all() and (roles[:, 2] == WEAK_OPPOSITE).all()


def test_bernoulli_roles_keep_one_token_of_each_weak_role():
    roles = sample_roles(np.random.default_rng(1), 200, 8, "bernoulli")
    for role in (RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE):
        assert ((roles == role).sum(axis=1) == 1).all()
    assert (roles[:, 3:] == IRRELEVANT).all() and (roles[:, 0] == RELEVANT).all()
    swapped = roles[:, 1] == WEAK_OPPOSITE
    assert abs(swapped.mean() - 0.5) < 5 * np.sqrt(0.25 / 200)


def test_the_test_stream_is_reproducible_and_its_own():
    _, first = train_test_generators(cell_seed(4, 100, 10.0))
    _, again = train_test_generators(cell_seed(4, 100, 10.0))
    assert np.array_equal(first.standard_normal(5), again.standard_normal(5))


def test_cells_of_other_signal_norms_draw_other_noise():
    """The noise coordinates (all but the first two) of two cells differing only in ||mu|| are
    independent draws, not the same noise under another signal."""

    def noise(m):
        train, _ = train_test_generators(cell_seed(1, 30, m))
        return sample_dataset(train, 5, 8, 30, m, 0.2, 0.2).x[..., 2:]

    assert not np.allclose(noise(5.0), noise(10.0))
    assert not np.allclose(noise(5.0), noise(5.5))
    assert np.array_equal(noise(5.0), noise(5.0))
    # the seed names the cell: (base seed, d, ||mu|| in thousandths)
    assert cell_seed(1, 30, 5.5).entropy == [1, 30, 5500]


def test_gram_data_below_the_wishart_range_is_the_materialised_draw():
    """d - 2 < N: the Bartlett draw needs d - 2 >= N, so the tokens are drawn in d dimensions from
    the same stream and their Gram matrix returned."""
    n, T, d = 3, 4, 10  # N = 12 > d - 2
    for noise in ("exact", "bernoulli"):
        fast = sample_gram_data(np.random.default_rng(5), n, T, d, 3.0, 0.2, 0.34, noise)
        tokens = sample_dataset(np.random.default_rng(5), n, T, d, 3.0, 0.2, 0.34, noise)
        reference = GramData.from_tokens(tokens)
        for field in ("gram", "coords", "y", "clean_y", "noisy", "roles"):
            assert np.array_equal(getattr(fast, field), getattr(reference, field)), (noise, field)
        assert fast.signal_norm == 3.0
        flat = tokens.x.reshape(n * T, d)
        assert np.allclose(fast.gram, flat @ flat.T) and np.array_equal(fast.coords, flat[:, :2])
        assert np.array_equal(reference.noisy, tokens.noisy)


def test_wishart_gram_data_carries_the_data_model():
    """The Bartlett path: labels, flips, roles and the tokens' first two coordinates of the data
    model (huge ||mu||: the coordinates are the signal), and E K_jj = d for irrelevant tokens."""
    n, T, d, norm, rho = 40, 4, 200, 1e6, 0.2
    data = sample_gram_data(np.random.default_rng(6), n, T, d, norm, rho, 0.2)
    assert data.noisy.dtype == bool and data.noisy.sum() == 8
    assert np.array_equal(data.y, np.where(data.noisy, -data.clean_y, data.clean_y))
    assert set(np.unique(data.clean_y)) == {-1, 1} and data.signal_norm == norm
    assert (data.roles[:, 0] == RELEVANT).all() and (data.roles[:, 2] == WEAK_OPPOSITE).all()
    coords = data.coords.reshape(n, T, 2) / norm
    own = np.where(data.clean_y == 1, 0, 1)
    rows = np.arange(n)
    assert np.allclose(coords[rows, 0, own], 1, atol=1e-4) and np.allclose(coords[rows, 0, 1 - own], 0, atol=1e-4)
    assert np.allclose(coords[rows, 1, own], rho, atol=1e-4) and np.allclose(coords[rows, 2, 1 - own], rho, atol=1e-4)
    bernoulli = sample_gram_data(np.random.default_rng(7), n, T, d, norm, rho, 0.2, "bernoulli")
    assert (bernoulli.roles[:, 1] == WEAK_OPPOSITE).any() and (bernoulli.roles[:, 1] == WEAK_ALIGNED).any()
    counts = [
        sample_gram_data(np.random.default_rng(s), 10, 4, 50, 1.0, rho, 0.3, "bernoulli").noisy.sum() for s in range(12)
    ]
    assert len(set(counts)) > 2  # Bernoulli flips, not a fixed number
    # irrelevant tokens are pure noise, |x|^2 ~ chi2(d): mean d, variance 2 d
    diagonals = np.concatenate(
        [
            np.diag(sample_gram_data(np.random.default_rng(10 + s), 10, 4, 60, 3.0, rho, 0.2).gram)[3::4]
            for s in range(300)
        ]
    )
    assert abs(diagonals.mean() - 60) < 4 * np.sqrt(2 * 60 / len(diagonals))


def test_gram_data_from_tokens_keeps_the_labels():
    data = sample_dataset(np.random.default_rng(8), 6, 4, 12, 2.0, 0.2, 0.5)
    gram = GramData.from_tokens(data)
    assert np.array_equal(gram.noisy, data.noisy) and np.array_equal(gram.y, data.y)
    assert np.array_equal(gram.clean_y, data.clean_y) and np.array_equal(gram.roles, data.roles)


def test_an_ensemble_member_moves_the_tokens_in_their_last_bits(monkeypatch):
    from replication.perturbation import VARIABLE

    def tokens():
        return sample_dataset(np.random.default_rng(3), 4, 4, 16, 2.0, 0.2, 0.2).x

    monkeypatch.delenv(VARIABLE, raising=False)
    base = tokens()
    monkeypatch.setenv(VARIABLE, "2")
    moved = tokens()
    assert np.any(moved != base) and np.array_equal(moved, tokens())
    # noise coordinates: each moved by at most 4 ulps (the default); the first two carry the signal added after
    np.testing.assert_allclose(moved[..., 2:], base[..., 2:], rtol=5 * np.finfo(float).eps, atol=0)
