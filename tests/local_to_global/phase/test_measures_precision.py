"""The phase measures' arithmetic: the closed fraction in double precision whatever the losses'
dtype, the stopping rule's threshold inclusive, and the chain's and unigram predictor's
cross-entropies of batches on the training device."""

import numpy as np
import pytest
import torch

from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.measures import (
    chain_cross_entropy,
    closed_fraction,
    settled_since,
    unigram_cross_entropy,
)

CHAIN = MarkovChain(0.3, 0.9)


def test_the_closed_fraction_of_single_precision_losses_is_computed_in_double():
    # float32 losses whose differences round in float32: 1.0000001 - 0.1 is not a float32.
    model = np.array([1.0000001, 0.7, 0.4], dtype=np.float32)
    chain = np.array([0.1, 0.3, 0.2], dtype=np.float32)
    unigram = np.array([1.3, 1.1, 0.9], dtype=np.float32)
    exact = [model.astype(float), chain.astype(float), unigram.astype(float)]
    expected = closed_fraction(*exact, 2)
    np.testing.assert_allclose(closed_fraction(model, chain, unigram, 2), expected, rtol=1e-15, atol=0)


def test_a_closed_fraction_exactly_at_the_threshold_counts_as_settled():
    steps = np.array([0, 10, 20, 30])
    assert settled_since(steps, np.array([0.5, 0.75, 0.75, 0.875]), 0.75) == 10


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_the_cross_entropies_of_batches_on_cuda_equal_the_cpus():
    generator = torch.Generator().manual_seed(3)
    x, y = (torch.randint(0, 2, (4, 9), generator=generator) for _ in range(2))
    on_cpu = chain_cross_entropy(CHAIN, x, y), unigram_cross_entropy(CHAIN, y)
    on_cuda = chain_cross_entropy(CHAIN, x.cuda(), y.cuda()), unigram_cross_entropy(CHAIN, y.cuda())
    for host, device in zip(on_cpu, on_cuda):
        assert device.device.type == "cuda"
        assert device.item() == pytest.approx(host.item(), rel=1e-12)
