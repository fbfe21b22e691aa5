"""The canonical model with the attention scalar, theta = (e, w, a) (Sec. 4.1, App. G; Figs. 2, 5).

Logit ``z(X) = e^2 [(X - 1/2)(1 + a e^2)(1 + 2w|w|) + w|w| |1 + a e^2|] + b``: the gap is
``D = e^2 (1 + a e^2)(1 + 2w|w|)`` and, with the bias at its optimum, the loss is the same
``F(D)`` as in two dimensions (``markov.MarkovChain``), so only the gap and its chain rule are new.
At ``a = 0`` every function here equals its counterpart in ``canonical``.
"""

from __future__ import annotations

import numpy as np

from ..markov import MarkovChain
from . import canonical
from .canonical import SADDLE_W, signed_square

# Limit points with e != 0, a = -1/e^2, w = -1/sqrt 2: the gap is 0 there (loss H(pi)), and the
# theory leaves their type open (Remark 5).
STATIONARY = "stationary"


def _arrays(*values):
    return np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))


def scalar_factor(e, a):
    """1 + a e^2: how the attention scalar scales the gap."""
    e, a = _arrays(e, a)
    return 1.0 + a * e**2


def gap(e, w, a):
    e, w, a = _arrays(e, w, a)
    return e**2 * scalar_factor(e, a) * signed_square(w)


def loss(chain: MarkovChain, e, w, a):
    return chain.loss_of_gap(gap(e, w, a))


def gap_derivatives(e, w, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D, grad D and the Frobenius norm of the Hessian of D.

    ``D = u(e, a) s(w)`` with ``u = e^2 + a e^4`` and ``s = 1 + 2w|w|`` (``s' = 4|w|``,
    ``s'' = 4 sign w``), so every second derivative is a product of one factor of each.
    """
    e, w, a = _arrays(e, w, a)
    s, ds, dds = signed_square(w), 4 * np.abs(w), 4 * np.sign(w)
    # Powers as products: NumPy's float power costs ~60 ns an entry, most of a flow's time.
    e2 = e * e
    e3, e4 = e2 * e, e2 * e2
    u, u_e, u_a = e2 + a * e4, 2 * e + 4 * a * e3, e4
    u_ee, u_ea = 2 + 12 * a * e2, 4 * e3
    grad = np.stack([u_e * s, u * ds, u_a * s])
    hessian = np.sqrt((u_ee * s) ** 2 + (u * dds) ** 2 + 2 * ((u_e * ds) ** 2 + (u_ea * s) ** 2 + (u_a * ds) ** 2))
    return u * s, grad, hessian


def gradient(chain: MarkovChain, e, w, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dL/de, dL/dw, dL/da) = F'(D) (2e(1+2w|w|)(1+2ae^2), 4e^2|w|(1+ae^2), e^4(1+2w|w|))."""
    value, grad, _ = gap_derivatives(e, w, a)
    slope = chain.loss_slope(value)
    return tuple(slope * grad)


def energy(e, w, a):
    """E = e^2 - w^2 - sign(w) log|w| - 2a^2, conserved by the flow off the plane w = 0.

    d/dt (e^2 - w^2 - sign(w) log|w|) = -4 a e^4 (1+2w|w|) F'(D) along the flow and
    d/dt a^2 = -2 a e^4 (1+2w|w|) F'(D), so the a^2 term enters with the factor -2.
    """
    e, w, a = _arrays(e, w, a)
    return canonical.energy(e, w) - 2.0 * a**2


def global_min_scalar(chain: MarkovChain, e, w):
    """The global-minimum surface as a graph over (e, w): a = (D*/(e^2 (1+2w|w|)) - 1) / e^2.

    NaN where it does not exist (e = 0 or w = -1/sqrt 2).
    """
    e, w = _arrays(e, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (chain.optimal_gap / (e**2 * signed_square(w)) - 1.0) / e**2
    return np.where(np.isfinite(a), a, np.nan)


def stationary_scalar(e):
    """a = -1/e^2 on the stationary set {e != 0, w = -1/sqrt 2}."""
    e = np.asarray(e, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(e != 0, -1.0 / e**2, np.nan)


def classify_endpoint(chain: MarkovChain, e, w, a, tol: float = 1e-4) -> np.ndarray:
    """Label where integrated flows ended, as in two dimensions plus the stationary set."""
    e, w, a = _arrays(e, w, a)
    labels = canonical.classify_endpoint(chain, e, w, tol=tol, gap_value=gap(e, w, a))
    on_stationary = (np.abs(e) >= tol) & (np.abs(w - SADDLE_W) < tol) & (np.abs(scalar_factor(e, a)) < tol)
    labels[on_stationary & (labels == canonical.UNCONVERGED)] = STATIONARY
    return labels


def flow_gradient(chain: MarkovChain):
    """The gradient as ``integrate_flow`` wants it: a (3, n) array of (e, w, a) in, (3, n) out."""
    return lambda state: np.stack(gradient(chain, state[0], state[1], state[2]))
