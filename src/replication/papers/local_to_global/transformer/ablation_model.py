"""The authors' two-symbol transformer of the Fig. 3 ablation (``two_symbol_embedding``, see ablation.py)
and the GPT-2 initialisation it trains from."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from .model import MarkovTransformer, TransformerConfig
from .settings import RunSettings


class TwoSymbolTransformer(nn.Module):
    """The authors' embedding: rows ``wte[0]``, ``wte[1]`` for the symbols, tied to a 2-way head with bias.

    The 2-way cross-entropy depends only on the logit difference, so the model is the scalar one
    reparametrised: ``e = wte[1] - wte[0]``, positional embeddings ``p_n + wte[0]``, bias
    ``b[1] - b[0]``; the forward pass is :class:`MarkovTransformer`'s with these effective
    values. What differs is the optimisation: AdamW's per-coordinate steps and weight decay act on
    ``wte`` and on two biases.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        template = MarkovTransformer(config)
        # Kept outside the module tree: only its forward pass is used, never its parameters.
        object.__setattr__(self, "_template", template)
        self.wte = nn.Parameter(torch.empty(2, config.d))
        for name, param in template.named_parameters():
            if name not in ("e", "b"):
                setattr(self, name, nn.Parameter(torch.empty_like(param)))
        self.b = nn.Parameter(torch.zeros(2))

    def effective_parameters(self) -> dict[str, torch.Tensor]:
        own = dict(self.named_parameters())
        shared = {name: own[name] for name, _ in self._template.named_parameters() if name not in ("e", "p", "b")}
        return {**shared, "e": self.wte[1] - self.wte[0], "p": self.p + self.wte[0], "b": self.b[1:] - self.b[:1]}

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return functional_call(self._template, self.effective_parameters(), (tokens,))

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The 2-way cross-entropy, i.e. the binary one of the logit difference."""
        return F.binary_cross_entropy_with_logits(self(x), y.to(self.wte.dtype))


@torch.no_grad()
def gpt2_initialise(model: nn.Module, sigma: float, generator: torch.Generator) -> nn.Module:
    """GPT-2 init of every trained parameter, in registration order: N(0, sigma^2), the residual
    output projections W_O and W_2 N(0, sigma^2 / 2), the head bias zero."""
    for name, param in model.named_parameters():
        if name == "b":
            param.zero_()
            continue
        std = sigma / math.sqrt(2) if name in ("W_O", "W_2") else sigma
        param.copy_(torch.randn(param.shape, generator=generator) * std)
    return model


def build_two_symbol(settings: RunSettings, generator: torch.Generator) -> TwoSymbolTransformer:
    return gpt2_initialise(TwoSymbolTransformer(TransformerConfig.from_settings(settings)), settings.sigma, generator)
