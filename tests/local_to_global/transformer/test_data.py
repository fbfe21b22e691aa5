"""The Markov sampler (the CPU's walk and the bulk scan): the law of the chain (pi and P) and determinism."""

import numpy as np
import pytest
import torch

from replication.papers.local_to_global.data import BatchStream, sample_sequences, symbols_in_bulk
from replication.papers.local_to_global.markov import MarkovChain


def _sequential(chain, batch, length, seed):
    """Reference sampler: one symbol at a time."""
    rng = np.random.default_rng(seed)
    s = np.empty((batch, length), dtype=int)
    s[:, 0] = rng.random(batch) < chain.stationary[1]
    for n in range(1, length):
        u = rng.random(batch)
        s[:, n] = np.where(s[:, n - 1] == 1, u < 1 - chain.q, u < chain.p)
    return s


def _statistics(s):
    ones = s.mean()
    prev, nxt = s[..., :-1].ravel(), s[..., 1:].ravel()
    p_hat = nxt[prev == 0].mean()  # P(1 | 0)
    q_hat = 1 - nxt[prev == 1].mean()  # P(0 | 1)
    return ones, p_hat, q_hat


@pytest.mark.parametrize("p, q", [(0.5, 0.8), (0.2, 0.3), (0.1, 0.1), (0.9, 0.9), (0.05, 0.7)])
def test_transition_frequencies_and_marginal_match_the_chain(p, q):
    chain = MarkovChain(p, q)
    s = sample_sequences(chain, (64,), 2001, torch.Generator().manual_seed(3)).numpy()
    assert set(np.unique(s)) <= {0, 1}
    ones, p_hat, q_hat = _statistics(s)
    n = s.size
    # Tolerances: 5 standard errors; the marginal's error is inflated by the chain's correlation
    # time 1 / (p + q) (and |1 - p - q| close to 1 makes it large, hence the generous factor).
    corr = (1 + abs(1 - p - q)) / (1 - abs(1 - p - q))
    pi1 = chain.stationary[1]
    assert abs(ones - pi1) < 5 * np.sqrt(pi1 * (1 - pi1) * corr / n)
    assert abs(p_hat - p) < 5 * np.sqrt(p * (1 - p) / (n * chain.stationary[0]))
    assert abs(q_hat - q) < 5 * np.sqrt(q * (1 - q) / (n * pi1))


def test_first_symbol_is_stationary_and_agrees_with_a_sequential_sampler():
    chain = MarkovChain(0.5, 0.8)
    bulk = sample_sequences(chain, (20000,), 3, torch.Generator().manual_seed(0)).numpy()
    reference = _sequential(chain, 20000, 3, seed=0)
    for n in range(3):  # the marginal at every position is pi, for both samplers
        assert abs(bulk[:, n].mean() - chain.stationary[1]) < 0.015
        assert abs(reference[:, n].mean() - chain.stationary[1]) < 0.015
    # Pair frequencies (s0, s1) agree with pi(a) P(a, b).
    for a in (0, 1):
        for b in (0, 1):
            kernel = [[1 - chain.p, chain.p], [chain.q, 1 - chain.q]]
            expected = chain.stationary[a] * kernel[a][b]
            assert abs(np.mean((bulk[:, 0] == a) & (bulk[:, 1] == b)) - expected) < 0.015


def test_same_seed_same_batch_and_different_seed_different_batch():
    chain = MarkovChain(0.2, 0.3)
    a = sample_sequences(chain, (4, 16), 1025, torch.Generator().manual_seed(7))
    b = sample_sequences(chain, (4, 16), 1025, torch.Generator().manual_seed(7))
    c = sample_sequences(chain, (4, 16), 1025, torch.Generator().manual_seed(8))
    assert a.shape == (4, 16, 1025) and a.dtype == torch.int64
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_batch_stream_shifts_targets_and_is_seeded():
    chain = MarkovChain(0.5, 0.8)
    first = BatchStream(chain, batch_size=16, context=32, seed=5, chunk=3)
    second = BatchStream(chain, batch_size=16, context=32, seed=5, chunk=3)
    batches = [next(first) for _ in range(7)]  # crosses two chunk boundaries
    for x, y in batches:
        assert x.shape == y.shape == (16, 32)
        assert torch.equal(x[:, 1:], y[:, :-1])
    for (x1, y1), (x2, y2) in zip(batches, (next(second) for _ in range(7))):
        assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert not torch.equal(batches[0][0], batches[1][0])


def _one_at_a_time(chain, u):
    """The chain's definition applied to given uniforms, symbol by symbol: s_0 = 1[u_0 < pi1], then
    1[u < p] after a 0 and 1[u < 1 - q] after a 1 (every comparison in the sampler's float32)."""
    u = u.numpy()
    f32 = np.float32
    s = np.empty(u.shape, dtype=np.int64)
    s[..., 0] = u[..., 0] < f32(chain.stationary[1])
    for n in range(1, u.shape[-1]):
        s[..., n] = np.where(s[..., n - 1] == 1, u[..., n] < f32(1 - chain.q), u[..., n] < f32(chain.p))
    return s


@pytest.mark.parametrize("p, q", [(0.25, 0.25), (0.75, 0.75), (0.25, 0.5), (0.25, 0.75), (0.2, 0.3), (0.9, 0.6)])
def test_bulk_sampler_equals_the_definition_on_given_uniforms(monkeypatch, p, q):
    """The bulk sampler (resets, flips, cumulative max and sum) against the step-by-step definition,
    on uniforms that sit exactly on every threshold (pi1, p, 1 - q: exact in binary for the first
    four chains; p + q = 1 for the fourth, where every step is a reset) as well as in between; a (3, 4, 40)
    batch, so the scan runs along the last axis."""
    chain = MarkovChain(p, q)
    generator = torch.Generator().manual_seed(1)
    thresholds = torch.tensor([chain.stationary[1], p, 1 - q, 0.0], dtype=torch.float32)
    u = torch.rand(3, 4, 40, generator=generator)
    on_threshold = torch.rand(3, 4, 40, generator=generator) < 0.5
    u = torch.where(on_threshold, thresholds[torch.randint(0, 4, (3, 4, 40), generator=generator)], u)
    drawn = []

    def rand(*shape, generator=None, device=None):
        assert shape == (3, 4, 40)
        drawn.append(shape)
        return u.clone()

    monkeypatch.setattr(torch, "rand", rand)
    s = sample_sequences(chain, (3, 4), 40, torch.Generator().manual_seed(0))
    assert drawn == [(3, 4, 40)]  # one uniform per symbol, drawn once
    assert s.shape == (3, 4, 40) and s.dtype == torch.int64
    expected = _one_at_a_time(chain, u)
    np.testing.assert_array_equal(s.numpy(), expected)  # the CPU's walk
    np.testing.assert_array_equal(symbols_in_bulk(chain, u).numpy(), expected)  # the other devices' scan


@pytest.mark.parametrize("p, q", [(0.5, 0.8), (0.2, 0.3), (0.05, 0.7), (0.9, 0.95)])
def test_the_cpu_walk_and_the_bulk_scan_agree_on_long_batches(p, q):
    """The two samplers from the same uniforms, at training shapes (a chunk of batches of 1025 symbols)."""
    chain = MarkovChain(p, q)
    u = torch.rand(3, 16, 1025, generator=torch.Generator().manual_seed(11))
    walked = sample_sequences(chain, (3, 16), 1025, torch.Generator().manual_seed(11))
    assert torch.equal(walked, symbols_in_bulk(chain, u))
