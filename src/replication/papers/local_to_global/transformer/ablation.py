"""Fig. 3 ablation: which difference from the authors' public code moves W_V's alignment with e.

The authors' Markov-Simple code differs from this pipeline's Fig. 3 run in a few settings. Each
variant changes one of them (``all_authors`` changes all at once); the runs stop early, only the
checkpoints of Fig. 3 and a late one matter:

- ``peak_lr``: AdamW peak lr 2e-3 (this pipeline: 1e-3);
- ``schedule_horizon``: the one-cycle schedule spans a longer run (their scripts: 5000 or 8000
  iterations), so the early checkpoints sit near the peak lr instead of in the decay;
- ``two_symbol_embedding``: a token embedding with one vector per symbol (vocabulary 2) tied to a
  2-way output head with a bias per symbol, instead of the scalar token ``x e`` and one bias;
- ``value_output`` (Fig. 6): the rank-one init's ``W_V = alpha v^T`` as their ``lowrank`` init
  sets it (alpha on the output side) instead of this pipeline's ``v alpha^T``.

``pipeline`` is the figure's own run (the first seed), reused, not retrained.

The GPT-2 initialisation (N(0, 0.02^2), output projections / sqrt 2, positional embeddings
N(0, 0.02^2), zero biases) is the same in both, so it is no variant.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from .model import MarkovTransformer, TransformerConfig
from .settings import RunSettings
from .structure import abs_cos, structure_table

MATRICES = ("W_V", "W_1")


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


def effective_checkpoints(checkpoints: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Checkpoints with ``e`` = wte[1] - wte[0] where the run used the two-symbol embedding."""
    if "wte" in checkpoints and "e" not in checkpoints:
        checkpoints = {**checkpoints, "e": checkpoints["wte"][:, 1] - checkpoints["wte"][:, 0]}
    return checkpoints


def alignment_table(checkpoints: dict[str, np.ndarray], steps=None) -> pd.DataFrame:
    """structure_table plus |cos| of W_V's top *left* (output-side) singular vector with W_1's input
    direction: the quantity measured on the authors' own Fig. 3 snapshots (0.996 at iteration 200)."""
    checkpoints = effective_checkpoints(checkpoints)
    table = structure_table(checkpoints, MATRICES, steps)
    if table.empty:
        return table.assign(cos_wv_output_w1_input=pd.Series(dtype=float))
    cross = {}
    for index, step in enumerate(checkpoints["step"]):
        left_v = np.linalg.svd(checkpoints["W_V"][index])[0][:, 0]
        input_1 = np.linalg.svd(checkpoints["W_1"][index])[2][0]
        cross[int(step)] = abs_cos(left_v, input_1)
    table["cos_wv_output_w1_input"] = table.step.map(cross)
    return table


def ablation_table(results: dict[str, dict[str, np.ndarray]]) -> pd.DataFrame:
    """One row per (variant, matrix, checkpoint) from each variant's checkpoints."""
    frames = []
    for variant, checkpoints in results.items():
        frame = alignment_table(checkpoints)
        frame.insert(0, "variant", variant)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def recovering_variants(table: pd.DataFrame, step: int, threshold: float) -> list[str]:
    """Variants whose W_V output-side singular vector lies along e (|cos| >= threshold) at ``step``,
    as in the authors' snapshot, where the pipeline's own run does not."""
    rows = table[(table.matrix == "W_V") & (table.step == step)]
    return [r.variant for r in rows.itertuples() if r.cos_e_output >= threshold and r.variant != "pipeline"]


QUANTITIES = {  # column -> panel title
    "top_share": "top singular share",
    "cos_e_output": "|cos| output-side vector, e",
    "cos_e_input": "|cos| input-side vector, e",
    "cos_wv_output_w1_input": "|cos| W_V output side, W_1 input side",
}


def ablation_figure(table: pd.DataFrame):
    """One panel per (matrix, quantity): the value at each checkpoint, one line per variant."""
    import matplotlib.pyplot as plt

    panels = [("W_V", q) for q in QUANTITIES] + [("W_1", "top_share"), ("W_1", "cos_e_input")]
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.4), squeeze=False)
    for ax, (matrix, quantity) in zip(axes.ravel(), panels):
        rows = table[table.matrix == matrix]
        for variant, part in rows.groupby("variant", sort=False):
            ax.plot(part.step, part[quantity], marker="o", label=variant)
        ax.set(title=f"{matrix}: {QUANTITIES[quantity]}", xlabel="iteration", ylim=(-0.02, 1.02))
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig, table
