"""The full transformer's loss as a twice-differentiable function of one flat parameter vector, its
Hessian-vector products, and the extreme eigenvalues of that Hessian by Lanczos.

The training path's attention (``transformer/fast_attention.py``) has a hand-written backward that
autograd cannot differentiate again. ``binary_attention`` here is the same function written in
plain tensor operations: with tokens t in {0, 1}, a key's score splits as S_ni + tau c_i + t_i
beta^tau_n for a query of symbol tau (the derivation is fast_attention.py's), so

    sum_i w_ni (V_i + t_i u) = a0 (E ((1 - t) V))_n + a1 (E (t V))_n + a1 (E t)_n u,
    sum_i w_ni               = a0 (E (1 - t))_n + a1 (E t)_n,

with E_ni = exp(S_ni + tau c_i - m_n) on the causal triangle, a0 = exp(-max(0, beta)) and
a1 = exp(beta - max(0, beta)). Every batch-dependent term is one product of the N x N matrix E with
token-masked columns: no B x N x N tensor is formed, so a Hessian-vector product (double backward)
costs a few GEMMs. The shift m_n is a constant of autograd (the ratio does not depend on it), and
every exponent is at most 0, so nothing overflows; a weight total below the cube root of the
smallest float (the double backward divides by its cube) raises AttentionOutOfRange. It is
checked against ``explicit_attention`` (softmax of the full score matrix) in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

# The model's parameters in its own order (MarkovTransformer.named_parameters), and their blocks.
BLOCKS = ("e", "p", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "b")


class AttentionOutOfRange(ArithmeticError):
    """A query's attention weights sum to below the float range after the shift."""


def explicit_attention(tokens: torch.Tensor, x: torch.Tensor, W_Q, W_K, W_V) -> torch.Tensor:
    """Causal softmax attention of the embeddings ``x`` (B, T, d) with the full score matrix."""
    d, length = x.shape[-1], x.shape[-2]
    q, k, v = x @ W_Q.T, x @ W_K.T, x @ W_V.T
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
    return torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v


def binary_attention(tokens: torch.Tensor, e, p, W_Q, W_K, W_V) -> torch.Tensor:
    """The same attention for tokens in {0, 1} (B, T), through one N x N weight matrix per query
    symbol (module docstring); differentiable any number of times by autograd."""
    length, d = tokens.shape[-1], e.shape[0]
    p = p[:length]
    scale = 1 / math.sqrt(d)
    Q, w = p @ W_Q.T * scale, W_Q @ e * scale
    K, kappa = p @ W_K.T, W_K @ e
    V, u = p @ W_V.T, W_V @ e
    t = tokens.to(e.dtype).T  # (T, B): keys along rows
    causal = torch.ones(length, length, dtype=torch.bool, device=e.device).tril()
    S, c = Q @ K.T, K @ w
    batch = t.shape[1]
    # Token-masked columns of every batch element, one GEMM with E per query symbol: keys of symbol 0
    # and of symbol 1 summed apart, so that no sum is formed by a subtraction.
    masks = torch.stack([1 - t, t])  # (2, T, B): key symbol 0, 1
    columns = torch.cat([(masks.unsqueeze(-1) * V[None, :, None, :]).reshape(2, length, -1), masks], dim=-1)
    columns = columns.permute(1, 0, 2).reshape(length, -1)  # (T, 2 (B d + B))
    outputs = []
    for tau in (0.0, 1.0):
        raw = (S + tau * c).masked_fill(~causal, float("-inf"))
        E = torch.exp(raw - raw.max(dim=-1, keepdim=True).values.detach())
        beta = (Q + tau * w) @ kappa  # (T,)
        top = torch.clamp(beta, min=0).detach()
        factors = torch.stack([torch.exp(-top), torch.exp(beta - top)])  # (2, T): key symbol 0, 1
        sums = (E @ columns).reshape(length, 2, -1)
        weighted_values = sums[..., : batch * d].reshape(length, 2, batch, d)  # sum_i E_ni [t_i = s] V_i
        weights = sums[..., batch * d :]  # (T, 2, B): sum_i E_ni [t_i = s]
        # The value of a key of symbol 1 is V_i + u.
        per_symbol = factors.T[:, :, None] * weights  # (T, 2, B)
        numerator = (factors.T[:, :, None, None] * weighted_values).sum(1) + per_symbol[:, 1, :, None] * u
        denominator = per_symbol.sum(1)
        # Numerator and denominator share any per-(row, batch) factor: dividing both by ``scale``
        # keeps the denominator in [1, 2], so its square and cube in the backward passes stay in range.
        scale = per_symbol.amax(1).detach()
        if bool((scale < torch.finfo(e.dtype).tiny ** (1 / 3)).any()):
            raise AttentionOutOfRange("attention weights below the float range")
        out = (numerator / scale[..., None]) / (denominator / scale)[..., None]  # (T, B, d)
        outputs.append(out.transpose(0, 1))
    return torch.where(tokens.unsqueeze(-1).bool(), outputs[1], outputs[0])


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
    """Mean binary cross-entropy of the transformer of ``transformer/model.py`` at ``parameters``
    (its forward written out over a dict), with ``attention`` "binary" or "explicit"."""
    P = parameters
    h = x.unsqueeze(-1).to(P["e"].dtype) * P["e"] + P["p"][: x.shape[-1]]
    if attention == "binary":
        attended = binary_attention(x, P["e"], P["p"], P["W_Q"], P["W_K"], P["W_V"])
    else:
        attended = explicit_attention(x, h, P["W_Q"], P["W_K"], P["W_V"])
    h = h + attended @ P["W_O"].T
    h = h + F.relu(h @ P["W_1"].T) @ P["W_2"].T
    return F.binary_cross_entropy_with_logits(h @ P["e"] + P["b"], y.to(P["e"].dtype))


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
