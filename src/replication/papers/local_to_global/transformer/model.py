"""A single-layer, single-head transformer on binary sequences (spec §4), in one readable file.

    x_n   = x_n e + p_n                                   token and positional embeddings
    x    += W_O Attn(W_Q x, W_K x, W_V x)                  causal softmax attention, scale 1/sqrt(d)
    x    += W_2 ReLU(W_1 x)                                MLP, 4d hidden units
    z_n   = <x_n, e> + b                                   logit of the next symbol (tied to e)

No LayerNorm and no biases but the scalar output bias b. Parameter names follow the paper.
``logits`` is this forward pass over a dict of parameters, the one the module and the plateau's
Hessian (a function of one flat parameter vector) both run; the attention is its one varying part,
computed by one of the exact paths of attention.py (``TransformerConfig.attention`` for training:
"fast", which uses that the symbols are binary, or "sdpa", PyTorch's general kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import ATTENTIONS, INITS  # listed once, in the config schema
from .attention import Parameters, attend, embed
from .fused_loss import fused_loss


@dataclass(frozen=True)
class TransformerConfig:
    """The architecture; no defaults here: they are the config's (schema.yaml, ``transformer.model``)."""

    d: int  # embedding dimension
    context: int  # N, the number of positions
    mlp_ratio: int  # hidden units of the MLP per embedding dimension
    attention: str  # "fast" (binary symbols, fast_attention.py) or "sdpa" (general kernel); same function

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise ValueError(f"unknown attention {self.attention!r}; allowed: {', '.join(ATTENTIONS)}")

    @classmethod
    def from_settings(cls, settings) -> TransformerConfig:
        """From typed transformer or run settings (their ``model`` and ``attention``)."""
        model = settings.model
        return cls(d=model.d, context=model.context, mlp_ratio=model.mlp_ratio, attention=settings.attention)


class MarkovTransformer(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        d, hidden = config.d, config.mlp_ratio * config.d
        self.config = config
        self.e = nn.Parameter(torch.empty(d))
        self.p = nn.Parameter(torch.empty(config.context, d))
        self.W_Q = nn.Parameter(torch.empty(d, d))
        self.W_K = nn.Parameter(torch.empty(d, d))
        self.W_V = nn.Parameter(torch.empty(d, d))
        self.W_O = nn.Parameter(torch.empty(d, d))
        self.W_1 = nn.Parameter(torch.empty(hidden, d))
        self.W_2 = nn.Parameter(torch.empty(d, hidden))
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits of shape (B, T) for symbols ``tokens`` in {0, 1} of shape (B, T), T <= context."""
        return logits(self._parameters, tokens, self.config.attention)

    def attend(self, tokens: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Causal softmax attention of the embeddings ``x`` (B, T, d), before W_O."""
        return attend(self.config.attention, tokens, x, self._parameters)

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Mean binary cross-entropy (nats) of the next-symbol predictions."""
        return loss(self._parameters, x, y, self.config.attention)

    def parameter_table(self) -> list[dict]:
        """Name, shape and count of every parameter (Table 1)."""
        return [
            {"parameter": name, "shape": tuple(param.shape), "count": param.numel()}
            for name, param in self.named_parameters()
        ]


def logits(parameters: Parameters, tokens: torch.Tensor, attention: str) -> torch.Tensor:
    """The forward pass (module docstring): logits (B, T) of the model with ``parameters`` (by name,
    as ``MarkovTransformer.named_parameters``) for ``tokens`` in {0, 1} (B, T), through the attention
    path ``attention`` (attention.py)."""
    P = parameters
    x = embed(P, tokens)
    x = x + attend(attention, tokens, x, P) @ P["W_O"].T
    x = x + F.relu(x @ P["W_1"].T) @ P["W_2"].T
    return x @ P["e"] + P["b"]


def loss(parameters: Parameters, x: torch.Tensor, y: torch.Tensor, attention: str) -> torch.Tensor:
    """Mean binary cross-entropy (nats) of the next-symbol predictions ``logits`` makes for ``y``.

    With the fast attention on the CPU, the same function with everything after the attention fused
    into one pass that also computes its gradients (fused_loss.py): an implementation detail."""
    if attention == "fast" and x.device.type == "cpu":
        return fused_loss(parameters, x, y, attend(attention, x, None, parameters))
    return F.binary_cross_entropy_with_logits(logits(parameters, x, attention), y.to(parameters["e"].dtype))


@torch.no_grad()
def initialise(
    model: MarkovTransformer, init: str, sigma: float, generator: torch.Generator, rank_one_value: str
) -> MarkovTransformer:
    """Set the parameters to one of the paper's initialisations (spec §4); draws only from ``generator``.

    ``rank_one_value`` puts alpha on the input side of the rank-one ``W_V`` (``v alpha^T``, kept
    rank one by gradient steps, whose inputs lie along alpha) or on its output side (``alpha v^T``).
    """
    if init not in INITS:
        raise ValueError(f"unknown initialisation {init!r}; allowed: {', '.join(INITS)}")
    m = model

    def normal(param, std):
        param.copy_(torch.randn(param.shape, generator=generator, device=param.device) * std)

    # standard (GPT-2): N(0, sigma^2), the output projections of each residual branch scaled by 1/sqrt 2.
    for param in (m.e, m.p, m.W_Q, m.W_K, m.W_V, m.W_1):
        normal(param, sigma)
    for param in (m.W_O, m.W_2):
        normal(param, sigma / math.sqrt(2))
    m.b.zero_()
    if init == "ours":
        # Region I* of Fig. 1(d): e = 0.5, p_n = -0.25, W_1 = 1, W_2 = -1; attention stays standard.
        m.e.fill_(0.5)
        m.p.fill_(-0.25)
        m.W_1.fill_(1.0)
        m.W_2.fill_(-1.0)
    elif init == "rank_one":
        d, hidden = m.W_1.shape[1], m.W_1.shape[0]
        device = m.e.device
        alpha = torch.randint(0, 2, (d,), generator=generator, device=device).to(m.e.dtype) * 2 - 1
        scale = (0.1 * torch.randn((), generator=generator, device=device)).abs()
        signs = torch.randint(0, 2, (hidden,), generator=generator, device=device).to(m.e.dtype) * 2 - 1
        w = (0.1 * torch.randn(hidden, generator=generator, device=device)).abs() * signs
        v = sigma * torch.randn(d, generator=generator, device=device)
        m.e.copy_(scale * alpha)
        m.p.copy_((-scale / 2 * alpha).expand_as(m.p))
        m.W_1.copy_(torch.outer(w, alpha))
        m.W_2.copy_(torch.outer(alpha, w))
        m.W_V.copy_(torch.outer(v, alpha) if rank_one_value == "input" else torch.outer(alpha, v))
    return model


def snapshot(model: MarkovTransformer) -> dict[str, torch.Tensor]:
    """A detached copy of every parameter, left on the model's device (no host transfer)."""
    return {name: param.detach().clone() for name, param in model.named_parameters()}


def stack_snapshots(snapshots: list[dict[str, torch.Tensor]]) -> dict[str, np.ndarray]:
    """Checkpoint arrays of shape (checkpoints, *parameter shape), one per parameter."""
    return {name: torch.stack([s[name] for s in snapshots]).cpu().numpy() for name in snapshots[0]}
