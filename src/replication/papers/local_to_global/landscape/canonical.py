"""The canonical two-parameter model theta = (e, w) of Section 2 (Fig. 1).

Logit ``z(x) = e^2 (1 + 2 w|w|) x + b - e^2/2``: the gap is ``D = e^2 (1 + 2w|w|)`` and, with the
bias at its optimum, the loss is ``F(D)`` (see ``markov.MarkovChain``).
"""

from __future__ import annotations

import numpy as np

from ..markov import MarkovChain

SADDLE_W = -1.0 / np.sqrt(2.0)
SADDLE_ENERGY = -(1.0 + np.log(2.0)) / 2.0  # E(0, -1/sqrt 2)

# Endpoint / basin labels.
GLOBAL_MIN, LOCAL_MIN, LOCAL_MAX, SADDLE, UNCONVERGED = "global_min", "local_min", "local_max", "saddle", "unconverged"


def signed_square(w):
    """1 + 2 w|w|: the factor by which w scales the gap; zero on the saddle line w = -1/sqrt 2."""
    w = np.asarray(w, dtype=float)
    return 1.0 + 2.0 * w * np.abs(w)


def gap(e, w):
    return np.asarray(e, dtype=float) ** 2 * signed_square(w)


def loss(chain: MarkovChain, e, w):
    return chain.loss_of_gap(gap(e, w))


def gradient(chain: MarkovChain, e, w) -> tuple[np.ndarray, np.ndarray]:
    """(dL/de, dL/dw) = (2e(1+2w|w|) F'(D), 4e^2|w| F'(D))."""
    e = np.asarray(e, dtype=float)
    w = np.asarray(w, dtype=float)
    slope = chain.loss_slope(gap(e, w))
    return 2 * e * signed_square(w) * slope, 4 * e**2 * np.abs(w) * slope


def energy(e, w):
    """E(e, w) = e^2 - w^2 - sign(w) log|w|, conserved by the flow (Lemma 1); infinite at w = 0."""
    e = np.asarray(e, dtype=float)
    w = np.asarray(w, dtype=float)
    with np.errstate(divide="ignore"):
        return e**2 - w**2 - np.sign(w) * np.log(np.abs(w))


def separatrix(w):
    """g(w) = sqrt(w^2 - log(-w) + E_sad) for w < 0: the flow lines |e| = g(w) end at the saddle."""
    w = np.asarray(w, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        inside = w**2 - np.log(-w) + SADDLE_ENERGY
        return np.where(w < 0, np.sqrt(np.maximum(inside, 0.0)), np.nan)


def global_min_locus(chain: MarkovChain, w):
    """|e| on the global-minimum curve e^2 (1 + 2w|w|) = D* (NaN where no such e exists)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        squared = chain.optimal_gap / signed_square(w)
    return np.where(squared > 0, np.sqrt(np.abs(squared)), np.nan)


def is_local_min_line(chain: MarkovChain, w):
    """On e = 0: local minimum where (p+q-1)(1+2w|w|) > 0, local maximum where < 0 (Thm 1)."""
    return (chain.switching - 1.0) * signed_square(w) > 0


def predicted_basin(chain: MarkovChain, e, w) -> np.ndarray:
    """Where the flow from (e, w) ends, by Thm 2 (p+q > 1) and Thm 8 (p+q < 1)."""
    e = np.abs(np.asarray(e, dtype=float))
    w = np.asarray(w, dtype=float)
    e, w = np.broadcast_arrays(e, w)
    g = separatrix(w)
    if chain.switching > 1:
        to_local = (w >= 0) | ((w > SADDLE_W) & (w < 0) & (e < g))
        on_separatrix = (w >= SADDLE_W) & (w < 0) & (e == g)
    else:
        to_local = (w < SADDLE_W) & (e < g)
        on_separatrix = (w <= SADDLE_W) & (e == g)
    labels = np.where(to_local, LOCAL_MIN, GLOBAL_MIN).astype(object)
    labels[(e == 0) & ~is_local_min_line(chain, w)] = LOCAL_MAX
    labels[on_separatrix] = SADDLE
    return labels


def classify_endpoint(chain: MarkovChain, e, w, tol: float = 1e-4, gap_value=None) -> np.ndarray:
    """Label where integrated flows ended: on the e = 0 line or on the global-minimum set.

    ``gap_value`` is the endpoints' gap D when the model has more parameters than (e, w) (the
    attention model): the e = 0 labels depend on w alone, the global minima on D alone.
    """
    e = np.asarray(e, dtype=float)
    w = np.asarray(w, dtype=float)
    on_axis = np.abs(e) < tol
    on_global = np.abs((gap(e, w) if gap_value is None else gap_value) - chain.optimal_gap) < tol
    labels = np.full(e.shape, UNCONVERGED, dtype=object)
    labels[on_global] = GLOBAL_MIN
    labels[on_axis & is_local_min_line(chain, w)] = LOCAL_MIN
    labels[on_axis & ~is_local_min_line(chain, w)] = LOCAL_MAX
    labels[on_axis & (np.abs(w - SADDLE_W) < tol)] = SADDLE
    return labels


def flow_gradient(chain: MarkovChain):
    """The gradient as ``integrate_flow`` wants it: a (2, n) array of (e, w) in, (2, n) out."""
    return lambda state: np.stack(gradient(chain, state[0], state[1]))


def gap_derivatives(e, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D, grad D = (2e s, 4e^2|w|) and the Frobenius norm of the Hessian of D (s = 1 + 2w|w|)."""
    e, w = np.broadcast_arrays(np.asarray(e, dtype=float), np.asarray(w, dtype=float))
    s, ds, dds = signed_square(w), 4 * np.abs(w), 4 * np.sign(w)
    grad = np.stack([2 * e * s, e**2 * ds])
    hessian = np.sqrt((2 * s) ** 2 + 2 * (2 * e * ds) ** 2 + (e**2 * dds) ** 2)
    return e**2 * s, grad, hessian
