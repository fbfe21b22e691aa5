"""What the phase diagram measures in a run: the excess loss over the chain's own cross-entropy,
the fraction of the gap closed, the plateau, the escape, whether a cell can be judged at all, and
the rank-one structure of the run's final weights.

Common random numbers: every test batch is scored three times, by the model (m), by the true
chain's own kernel (c, the entropy rate's predictor) and by the unigram predictor pi (u, the
plateau), all on the *same* sequences. The excess loss is m - c; the fraction of the gap closed is
(u - m) / (u - c), the gap measured on the same batches. At the plateau m ~ u and at the entropy
rate m ~ c, so at both ends the batch's sampling noise cancels and the fraction sits at 0 or 1;
only the denominator's noise remains, which is what decides whether a cell can be resolved.
Thresholds apply to sums over a trailing window of ``smooth`` evaluations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from ..markov import MarkovChain
from ..transformer.structure import structure_table
from .settings import MeasureSettings

if TYPE_CHECKING:  # torch is imported where a cross-entropy is computed: analysis jobs run without it
    import torch


class CellOutputs(NamedTuple):
    """What a cell's training job writes: evaluations.csv, runs.csv and final.npz (its arrays)."""

    evaluations: pd.DataFrame
    runs: pd.DataFrame
    final: dict[str, np.ndarray]


def chain_cross_entropy(chain: MarkovChain, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean -log P(y_n | x_n) under the chain's kernel (the Bayes predictor of every position)."""
    import torch

    kernel = torch.tensor([[1 - chain.p, chain.p], [chain.q, 1 - chain.q]], dtype=torch.float64, device=x.device)
    return -torch.log(kernel[x, y]).mean()


def unigram_cross_entropy(chain: MarkovChain, y: torch.Tensor) -> torch.Tensor:
    """Mean -log pi(y_n): the loss of the unigram predictor (the plateau) on the same targets."""
    import torch

    pi = torch.tensor(chain.stationary, dtype=torch.float64, device=y.device)
    return -torch.log(pi[y]).mean()


def gap(chain: MarkovChain) -> float:
    """H(pi) - entropy rate: what escaping the plateau gains."""
    return chain.unigram_loss - chain.bigram_loss


def _trailing_sum(values, smooth: int) -> np.ndarray:
    return pd.Series(np.asarray(values, dtype=float)).rolling(smooth, min_periods=1).sum().to_numpy()


def closed_fraction(model_loss, chain_loss, unigram_loss, smooth: int) -> np.ndarray:
    """Fraction of the gap closed at each evaluation: sum(u - m) / sum(u - c) over the trailing
    ``smooth`` evaluations (m, c, u: the model's, the chain's and the unigram predictor's losses on
    the same batches)."""
    model_loss, chain_loss, unigram_loss = (np.asarray(v, dtype=float) for v in (model_loss, chain_loss, unigram_loss))
    return _trailing_sum(unigram_loss - model_loss, smooth) / _trailing_sum(unigram_loss - chain_loss, smooth)


def settled_since(steps: np.ndarray, closed: np.ndarray, threshold: float) -> int | None:
    """The first step of the last unbroken stretch of evaluations with ``closed >= threshold`` that
    reaches the last evaluation; None when the last evaluation is below the threshold."""
    below = np.flatnonzero(np.asarray(closed) < threshold)
    start = below[-1] + 1 if len(below) else 0
    return int(steps[start]) if start < len(steps) else None


def run_measures(
    evaluations: pd.DataFrame, chain: MarkovChain, settings: MeasureSettings, reached: float, tail: int
) -> dict:
    """One run's measures from its evaluations (``step``, ``test_loss``, ``chain_loss``, ``unigram_loss``).

    - ``drop_end``: first step with closed fraction >= -drop (the excess loss has come down to
      (1 + drop) x the gap: the initial fall from the init's loss is over; the plateau starts);
    - ``escape``: first step with closed fraction >= ``escape`` (NaN if never), ``escaped``;
    - ``plateau_length``: escape - drop_end, or last step - drop_end when it never escaped
      (``censored``: the plateau lasts at least that long);
    - ``final_excess`` (mean m - c) and ``final_closed`` over the last ``smooth`` evaluations;
      ``reached``: final_closed >= ``reached`` (the entropy rate, the stopping rule's threshold);
    - noise: ``noise_gap``, the std of one batch's gap u - c (the denominator); ``noise_closed`` and
      ``noise_closed_fixed``, the std over the last ``tail`` evaluations of the unsmoothed closed
      fraction with common random numbers and of the one against the fixed population losses,
      (H(pi) - m) / (H(pi) - entropy rate): what the common random numbers cancel.
    """
    steps = evaluations.step.to_numpy()
    m, c, u = (evaluations[column].to_numpy(dtype=float) for column in ("test_loss", "chain_loss", "unigram_loss"))
    closed = closed_fraction(m, c, u, settings.smooth)
    dropped = np.flatnonzero(closed >= -settings.drop)
    drop_end = int(steps[dropped[0]]) if len(dropped) else int(steps[-1])
    escaped_at = np.flatnonzero(closed >= settings.escape)
    escaped = len(escaped_at) > 0
    escape = float(steps[escaped_at[0]]) if escaped else np.nan
    last = int(steps[-1])
    last_few = slice(-settings.smooth, None)
    per_batch = (u - m)[-tail:] / (u - c)[-tail:]
    fixed = (chain.unigram_loss - m[-tail:]) / gap(chain)
    return {
        "last_step": last,
        "drop_end": drop_end,
        "escaped": escaped,
        "escape": escape,
        "plateau_length": float((escape if escaped else last) - drop_end),
        "censored": not escaped,
        "final_excess": float(np.mean((m - c)[last_few])),
        "final_closed": float(closed[-1]),
        "reached": bool(closed[-1] >= reached),
        "noise_gap": float(np.std(u - c, ddof=1)),
        "noise_closed": float(np.std(per_batch, ddof=1)),
        "noise_closed_fixed": float(np.std(fixed, ddof=1)),
    }


def final_structure(final: dict[str, np.ndarray], init: str, seed: int) -> dict:
    """Top share of W_1 and W_V and their alignment with e after a run's last step (the structure
    of Fig. 3, one checkpoint; claim 6g per cell); ``final``: its cell's final.npz."""
    checkpoint = {"step": np.array([0])}
    for name in ("e", "W_1", "W_V"):
        checkpoint[name] = final[f"{init}/seed{seed}/{name}"][None]
    table = structure_table(checkpoint).set_index("matrix")
    w1, wv = table.loc["W_1"], table.loc["W_V"]
    return {
        "share_W_1": float(w1.top_share),
        "share_W_V": float(wv.top_share),
        "cos_e_W_1": float(w1.cos_e_input),
        "cos_e_W_V": float(np.nanmax([wv.cos_e_input, wv.cos_e_output])),
    }


def on_plateau_at(measures: pd.DataFrame, step: int) -> pd.Series:
    """Runs that have not escaped by ``step`` (a run that stopped early had escaped before it stopped)."""
    return ~(measures.escaped & (measures.escape <= step))


def resolvable(chain_gap: float, noise_gap: float, settings: MeasureSettings) -> bool:
    """Whether the closed fraction's denominator, the gap summed over ``smooth`` independent batches,
    is known well enough to tell the plateau from the entropy rate: the gap is at least
    ``resolution`` times the noise of its trailing mean."""
    return bool(chain_gap >= settings.resolution * noise_gap / np.sqrt(settings.smooth))
