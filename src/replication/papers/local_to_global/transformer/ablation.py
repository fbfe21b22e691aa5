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
N(0, 0.02^2), zero biases) is the same in both, so it is no variant. The two-symbol model is in
ablation_model.py; this module reads the variants' checkpoints (no torch: the figure job needs none).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .structure import abs_cos, structure_table

MATRICES = ("W_V", "W_1")


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
