"""A tiny transformer shared by the plateau tests (d = 2, context 6: 63 parameters, whose full
Hessian autograd gives in a fraction of a second), its training settings and Hessian settings."""

import numpy as np
import pytest
import torch

from helpers import random_transformer_parameters, small_run_settings
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.plateau.hessian import FlatParameters, transformer_loss
from replication.papers.local_to_global.plateau.settings import HeldOutSettings, HessianSettings
from replication.papers.local_to_global.transformer.settings import run_settings

TINY_D, TINY_CONTEXT = 2, 6


@pytest.fixture(scope="session")
def tiny_parameters():
    """The tiny model's parameters at a random point of scale ``scale`` (float64 arrays by name)."""
    return lambda scale, seed: random_transformer_parameters(scale, seed, TINY_D, TINY_CONTEXT)


@pytest.fixture(scope="session")
def tiny_chain() -> MarkovChain:
    return MarkovChain(0.6, 0.8)


@pytest.fixture(scope="session")
def tiny_hessian() -> HessianSettings:
    """Two fitted batches of 4 sequences, 3 to 4 held-out ones, tol a fraction of lambda_max."""
    return HessianSettings(
        batches=2, batch_size=4, seed=5, tol=1e-10, significance=2.0, tolerance=1e-3,
        held_out=HeldOutSettings(least=3, most=4), preconditioned=False, dtype="float64",
    )  # fmt: skip


@pytest.fixture(scope="session")
def tiny_run_settings():
    """Training settings of the tiny model: 60 steps of the shared schedule."""
    model = {"d": TINY_D, "context": TINY_CONTEXT, "mlp_ratio": 4}
    return run_settings({**small_run_settings(), "model": model, "steps": 60, "checkpoints": [60]})


@pytest.fixture(scope="session")
def hessian_product():
    """H v of the tiny model's loss on one batch (x, y) at ``parameters``, by autograd's own vhp."""

    def product(parameters: dict[str, np.ndarray], x, y, vector) -> np.ndarray:
        flat = FlatParameters.of(parameters)
        loss = lambda theta: transformer_loss(flat.unflatten(theta), x, y)  # noqa: E731
        return torch.autograd.functional.vhp(loss, flat.vector, torch.as_tensor(vector))[1].numpy()

    return product
