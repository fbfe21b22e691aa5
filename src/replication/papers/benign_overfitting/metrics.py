"""S (Definition 4.1) and the quantities of Theorem 4.2's conditions, Eqs. 9 and 10.

Two variants of Eqs. 9 and 10:

* **as-defined** (the default): the formulas of the paper. For each class c, the time
  accumulation of S = r (1 - r) (r = s_R, the relevant token's probability) summed over the
  clean samples of class c, against the largest accumulation of s_t (1 - s_t) over samples and
  tokens (Eq. 9, ratio min_c LHS_c / RHS), and the class-size-normalised balance of the two class
  sums (Eq. 10).
* **as-coded**: what the authors' v1 code computes. It keeps ONE running sum G over the flat log
  of (step, sample, token) rows of s (1 - s); at each step the class quantity is the sum, over
  the clean samples i of the class, of G read right after sample i's rows. Its Eq. 9 value
  (class quantity at the last step over the largest G) is therefore about the smaller clean-class
  size, and its Eq. 10 value at the first logged step is the ratio of the classes' mean 1-based
  sample indices. These reproduce the published Figs. 4 and 6; they are not the paper's formulas.

Accumulations run over the logged steps tau = 0..steps-1 (scores before each update), as the
authors log them.
"""

from __future__ import annotations

import numpy as np

from .data import RELEVANT


def relevance(s: np.ndarray) -> np.ndarray:
    """r = sum_{t in R} s_t with R = {token 0}."""
    return s[..., 0]


def S(s: np.ndarray) -> np.ndarray:
    """Definition 4.1: S = r (1 - r), in [0, 1/4]."""
    r = relevance(s)
    return r * (1.0 - r)


def class_masks(clean: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clean samples of class +1 and of class -1 (C_{+1}, C_{-1})."""
    return clean & (y == 1), clean & (y == -1)


def eq9_ratio(pair_sum: np.ndarray, clean: np.ndarray, y: np.ndarray) -> np.ndarray:
    """As defined: min_c sum_{i in C_c} sum_tau S^(i) / max_{i,t} sum_tau s_t^(i) (1 - s_t^(i)).

    pair_sum: (..., n, T) time sums of s (1 - s); clean, y: (..., n).
    """
    plus, minus = class_masks(clean, y)
    accumulated_S = pair_sum[..., 0]
    lhs = np.minimum((accumulated_S * plus).sum(-1), (accumulated_S * minus).sum(-1))
    return lhs / pair_sum.max(axis=(-2, -1))


def eq10_ratio(pair_sum: np.ndarray, clean: np.ndarray, y: np.ndarray) -> np.ndarray:
    """As defined: (sum_{C+1} sum_tau S / |C+1|) / (sum_{C-1} sum_tau S / |C-1|)."""
    plus, minus = class_masks(clean, y)
    accumulated_S = pair_sum[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((accumulated_S * plus).sum(-1) / plus.sum(-1)) / ((accumulated_S * minus).sum(-1) / minus.sum(-1))


def coded_class_sums(q_step: np.ndarray, before: np.ndarray, clean: np.ndarray, y: np.ndarray):
    """The code's per-class quantities at one logged step.

    q_step: (..., n) sum_t s_t (1 - s_t) of each sample at that step; before: (...) the running
    sum G over all earlier steps. G read after sample i = before + sum_{i' <= i} q_step[i'].
    """
    running = before[..., None] + np.cumsum(q_step, axis=-1)
    plus, minus = class_masks(clean, y)
    return (running * plus).sum(-1), (running * minus).sum(-1), plus.sum(-1), minus.sum(-1)


def eq9_ratio_as_coded(pair_sum, last_q, clean, y) -> np.ndarray:
    """The code's Fig. 4 value: min(class sums at the last step) / max G (= G at the end)."""
    total = pair_sum.sum(axis=(-2, -1))
    plus, minus, _, _ = coded_class_sums(last_q, total - last_q.sum(-1), clean, y)
    return np.minimum(plus, minus) / total


def eq10_ratio_as_coded(first_q, clean, y) -> np.ndarray:
    """The code's Fig. 6 value: class sums normalised by class size, at the first logged step."""
    plus, minus, n_plus, n_minus = coded_class_sums(first_q, np.zeros(first_q.shape[:-1]), clean, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (plus / n_plus) / (minus / n_minus)


def eq10_ratio_as_coded_last(pair_sum, last_q, clean, y) -> np.ndarray:
    """The same code quantity read at the last step: ~1 to within O(1/steps)."""
    total = pair_sum.sum(axis=(-2, -1))
    plus, minus, n_plus, n_minus = coded_class_sums(last_q, total - last_q.sum(-1), clean, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (plus / n_plus) / (minus / n_minus)


def relevant_probability(traj: dict) -> np.ndarray:
    """r = s_R of every recorded step and training sample, shape (steps, samples)."""
    relevant_token = np.argmax(traj["roles"] == RELEVANT, axis=1)
    return np.take_along_axis(traj["probabilities"], relevant_token[None, :, None], axis=-1)[..., 0]


def final_roles(traj: dict) -> np.ndarray:
    """Role of each sample's most probable token at the end of the run."""
    chosen = traj["probabilities"][-1].argmax(-1)
    return traj["roles"][np.arange(len(chosen)), chosen]
