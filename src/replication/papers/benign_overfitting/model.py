"""The one-layer token-selection model f(X) = sum_t softmax(X p)_t nu^T x_t, in d dimensions.

This is the direct reference: every step touches the full (n, T, d) data. The fast trainer in
``train.py`` runs the same gradient descent in the span of the training tokens.
"""

from __future__ import annotations

import numpy as np


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (token axis), shifted by the max for stability."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logistic_loss(margin: np.ndarray) -> np.ndarray:
    """log(1 + exp(-margin)), stable for large |margin|."""
    return np.logaddexp(0.0, -margin)


def output_weights(s: np.ndarray, gamma: np.ndarray, y: np.ndarray) -> np.ndarray:
    """c_{it} = -y_i s_it (gamma_it - f_i) / (n (1 + exp(y_i f_i))): grad_p L = sum_{i,t} c_it x_it.

    Works on any leading batch axes: s, gamma (..., n, T), y (..., n).
    """
    f = np.einsum("...t,...t->...", s, gamma)
    n = s.shape[-2]
    weight = -y * np.exp(-np.logaddexp(0.0, y * f)) / n  # -y / (n (1 + e^{y f}))
    return weight[..., None] * s * (gamma - f[..., None])


def forward(x: np.ndarray, p: np.ndarray, nu: np.ndarray):
    """Attention probabilities s (n, T) and outputs f (n,) for data x (n, T, d)."""
    s = softmax(x @ p)
    return s, np.einsum("nt,nt->n", s, x @ nu)


def loss(x: np.ndarray, y: np.ndarray, p: np.ndarray, nu: np.ndarray) -> float:
    return float(logistic_loss(y * forward(x, p, nu)[1]).mean())


def gradient(x: np.ndarray, y: np.ndarray, p: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Analytic grad_p of the mean logistic loss."""
    s = softmax(x @ p)
    return np.einsum("nt,ntd->d", output_weights(s, x @ nu, y), x)


def train_direct(x: np.ndarray, y: np.ndarray, nu: np.ndarray, lr: float, steps: int, record_every: int = 0):
    """Full-batch gradient descent on p from p(0) = 0 in d dimensions.

    Returns the final p and, if ``record_every``, the probabilities s at steps 0, k, 2k, ..., steps
    as an array (records, n, T).
    """
    p = np.zeros(x.shape[-1])
    records = []
    for step in range(steps):
        if record_every and step % record_every == 0:
            records.append(softmax(x @ p))
        p -= lr * gradient(x, y, p, nu)
    if record_every:
        records.append(softmax(x @ p))
    return p, (np.stack(records) if record_every else None)
