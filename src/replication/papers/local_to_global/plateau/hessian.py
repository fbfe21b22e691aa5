"""The full transformer's loss as a twice-differentiable function of one flat parameter vector, its
Hessian-vector products, and the extreme eigenvalues of that Hessian by Lanczos.

The loss is the model's own forward pass (``transformer/model.py:loss``) over a dict of
parameters, through the ``binary`` attention (``transformer/attention.py``): the training path's
algebra in plain tensor operations, which autograd differentiates twice (the training kernel's
backward is written out, and autograd cannot differentiate it again); ``explicit``, the softmax of
the full score matrix, is the check.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ..transformer.attention import AttentionOutOfRange, binary_attention, explicit_attention
from ..transformer.model import loss
from .settings import BLOCKS


@dataclass(frozen=True)
class FlatParameters:
    """The model's parameters as one vector: names, shapes and the vector itself (float64 unless told)."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    vector: torch.Tensor

    @classmethod
    def of(cls, parameters: dict[str, np.ndarray], dtype=torch.float64) -> FlatParameters:
        names = tuple(name for name in BLOCKS if name in parameters)
        arrays = [torch.as_tensor(np.asarray(parameters[name]), dtype=dtype) for name in names]
        return cls(names, tuple(tuple(a.shape) for a in arrays), torch.cat([a.reshape(-1) for a in arrays]))

    @property
    def sizes(self) -> list[int]:
        return [math.prod(shape) for shape in self.shapes]

    def unflatten(self, vector: torch.Tensor) -> dict[str, torch.Tensor]:
        parts = torch.split(vector, self.sizes)
        return {name: part.reshape(shape) for name, shape, part in zip(self.names, self.shapes, parts, strict=True)}

    def block_weights(self, vector: np.ndarray) -> dict[str, float]:
        """Share of a vector's squared norm in each parameter block."""
        parts = np.split(np.asarray(vector), np.cumsum(self.sizes)[:-1])
        total = float(np.sum(np.square(vector)))
        return {name: float(np.sum(np.square(part))) / total for name, part in zip(self.names, parts, strict=True)}


def transformer_loss(parameters: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, attention: str = "binary"):
    """Mean binary cross-entropy of the transformer of ``transformer/model.py`` at ``parameters``,
    through the attention path ``attention`` ("binary", twice differentiable, or "explicit")."""
    return loss(parameters, x, y, attention)


class HessianOperator:
    """The Hessian of the loss on one batch at one point, as Hessian-vector products.

    The gradient's graph is built once (``create_graph``) and kept: each product is one more
    backward through it, the forward is not repeated.
    """

    def __init__(self, loss: Callable[[torch.Tensor], torch.Tensor], point: torch.Tensor):
        self.point = point.detach().clone().requires_grad_(True)
        self.loss = loss(self.point)
        (self.gradient,) = torch.autograd.grad(self.loss, self.point, create_graph=True)
        self.products = 0

    @property
    def size(self) -> int:
        return self.point.numel()

    def __call__(self, vector) -> np.ndarray:
        self.products += 1
        direction = torch.as_tensor(np.asarray(vector).reshape(-1), dtype=self.point.dtype)
        (product,) = torch.autograd.grad(self.gradient, self.point, grad_outputs=direction, retain_graph=True)
        return product.detach().double().numpy()  # Lanczos itself in float64, whatever the products' precision

    def linear_operator(self) -> LinearOperator:
        return LinearOperator((self.size, self.size), matvec=self, dtype=np.float64)


def restricted_matrix(operator, basis: np.ndarray) -> np.ndarray:
    """basis^T H basis for the columns of ``basis`` (orthonormal), symmetrised, of any Hessian
    ``operator`` (a callable giving H v)."""
    products = np.stack([operator(column) for column in basis.T], axis=1)
    restricted = basis.T @ products
    return (restricted + restricted.T) / 2


def lowest_eigenpair(operator, tol: float, seed: int) -> tuple[float, np.ndarray]:
    """The lowest eigenvalue and its unit eigenvector of a symmetric ``operator`` (one with
    ``size`` and ``linear_operator()``: a Hessian, preconditioned or not), by Lanczos (ARPACK) from a
    seeded start; raises ArpackNoConvergence if it does not converge."""
    start = np.random.default_rng(seed).standard_normal(operator.size)
    values, vectors = eigsh(operator.linear_operator(), k=1, which="SA", tol=tol, v0=start)
    return float(values[0]), vectors[:, 0]


def largest_eigenvalue(operator, tol: float, seed: int) -> float:
    """The largest eigenvalue of ``operator``, as ``lowest_eigenpair``."""
    start = np.random.default_rng(seed).standard_normal(operator.size)
    linear = operator.linear_operator()
    return float(eigsh(linear, k=1, which="LA", tol=tol, v0=start, return_eigenvectors=False)[0])


__all__ = [
    "ArpackNoConvergence",
    "AttentionOutOfRange",
    "BLOCKS",
    "FlatParameters",
    "HessianOperator",
    "binary_attention",
    "explicit_attention",
    "largest_eigenvalue",
    "lowest_eigenpair",
    "restricted_matrix",
    "transformer_loss",
]
