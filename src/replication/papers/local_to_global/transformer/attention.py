"""The transformer's attention: the one part of its forward pass (``model.logits``) that varies.

Each path computes the same causal softmax attention softmax(q k^T / sqrt d) v of the embeddings
x (B, T, d), before W_O, from the parameters' dict and the tokens; they differ in what they are for:

- ``fast``: for binary tokens through one batch-independent N x N matrix, with its backward written
  out (fast_attention.py); training. Where its scores leave the float range it returns None and
  ``sdpa`` runs instead, which is exact there.
- ``sdpa``: PyTorch's general kernel.
- ``binary``: the fast path's algebra in plain tensor operations, differentiable any number of
  times by autograd (the plateau's Hessian, in float64; module docstring of ``binary_attention``).
- ``explicit``: the softmax of the full (B, T, T) score matrix, the definition itself.

``fast`` and ``sdpa`` are the config's choices for training (``ATTENTIONS``); all four are checked
against each other in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import torch
import torch.nn.functional as F

from .fast_attention import binary_token_attention

Parameters = Mapping[str, torch.Tensor]


class AttentionOutOfRange(ArithmeticError):
    """A query's attention weights sum to below the float range after the shift."""


def embed(parameters: Parameters, tokens: torch.Tensor) -> torch.Tensor:
    """x_n = t_n e + p_n (B, T, d): the token and positional embeddings."""
    return tokens.unsqueeze(-1).to(parameters["e"].dtype) * parameters["e"] + parameters["p"][: tokens.shape[-1]]


def _embedded(x: torch.Tensor | None, P: Parameters, tokens: torch.Tensor) -> torch.Tensor:
    """The embeddings ``x`` a path was given, or those of ``tokens`` where it was given None."""
    return embed(P, tokens) if x is None else x


def sdpa_attention(tokens: torch.Tensor, x: torch.Tensor | None, P: Parameters) -> torch.Tensor:
    """PyTorch's kernel; one head: (B, 1, T, d), and the default scale of SDPA is 1/sqrt(d)."""
    q, k, v = (_embedded(x, P, tokens).unsqueeze(1) @ P[name].T for name in ("W_Q", "W_K", "W_V"))
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1)


def fast_kernel_attention(tokens: torch.Tensor, x: torch.Tensor | None, P: Parameters) -> torch.Tensor:
    """The binary-token kernel, which reads the parameters, not ``x``; the general kernel where its
    scores leave the exponent range, and on other devices than the CPU (its passes are numba's)."""
    if tokens.device.type != "cpu":
        return sdpa_attention(tokens, x, P)
    out = binary_token_attention(tokens, P["e"], P["p"], P["W_Q"], P["W_K"], P["W_V"])
    return sdpa_attention(tokens, x, P) if out is None else out


def explicit_attention(tokens: torch.Tensor, x: torch.Tensor, W_Q, W_K, W_V) -> torch.Tensor:
    """Causal softmax attention of the embeddings ``x`` (B, T, d) with the full score matrix."""
    d, length = x.shape[-1], x.shape[-2]
    q, k, v = x @ W_Q.T, x @ W_K.T, x @ W_V.T
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    causal = torch.ones(length, length, dtype=torch.bool, device=x.device).tril()
    return torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v


def binary_attention(tokens: torch.Tensor, e, p, W_Q, W_K, W_V) -> torch.Tensor:
    """The attention for tokens in {0, 1} (B, T) through one N x N weight matrix per query symbol;
    differentiable any number of times by autograd.

    With tokens t in {0, 1}, a key's score splits as S_ni + tau c_i + t_i beta^tau_n for a query of
    symbol tau (the derivation is fast_attention.py's), so

        sum_i w_ni (V_i + t_i u) = a0 (E ((1 - t) V))_n + a1 (E (t V))_n + a1 (E t)_n u,
        sum_i w_ni               = a0 (E (1 - t))_n + a1 (E t)_n,

    with E_ni = exp(S_ni + tau c_i - m_n) on the causal triangle, a0 = exp(-max(0, beta)) and
    a1 = exp(beta - max(0, beta)). Every batch-dependent term is one product of the N x N matrix E
    with token-masked columns: no B x N x N tensor is formed, so a Hessian-vector product (double
    backward) costs a few GEMMs. The shift m_n is a constant of autograd (the ratio does not depend
    on it), and every exponent is at most 0, so nothing overflows; a weight total below the cube root
    of the smallest float (the double backward divides by its cube) raises AttentionOutOfRange."""
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


PATHS: dict[str, Callable[[torch.Tensor, torch.Tensor | None, Parameters], torch.Tensor]] = {
    "fast": fast_kernel_attention,
    "sdpa": sdpa_attention,
    "binary": lambda tokens, x, P: binary_attention(tokens, *(P[name] for name in ("e", "p", "W_Q", "W_K", "W_V"))),
    "explicit": lambda tokens, x, P: explicit_attention(tokens, _embedded(x, P, tokens), P["W_Q"], P["W_K"], P["W_V"]),
}


def attend(attention: str, tokens: torch.Tensor, x: torch.Tensor | None, parameters: Parameters) -> torch.Tensor:
    """The attention path ``attention`` (one of ``PATHS``) of the embeddings ``x`` (B, T, d) of ``tokens``,
    or of ``x`` None: then a path that reads the embeddings computes them (the fast path reads the
    parameters, and the fused loss needs none: a training step builds no (B, T, d) tensor it would
    not read)."""
    try:
        path = PATHS[attention]
    except KeyError:
        raise ValueError(f"unknown attention {attention!r}; allowed: {', '.join(PATHS)}") from None
    return path(tokens, x, parameters)
