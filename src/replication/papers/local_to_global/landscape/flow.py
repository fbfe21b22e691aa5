"""Gradient flow d theta/dt = -grad L for a whole batch of starts as one ODE system."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

Gradient = Callable[[np.ndarray], np.ndarray]  # (k, n) coordinates -> (k, n) gradient


def integrate_flow(
    gradient: Gradient,
    starts: np.ndarray,
    t_end: float,
    t_eval: np.ndarray | None = None,
    rtol: float = 1e-11,
    atol: float = 1e-13,
    method: str = "LSODA",
) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the flow from ``starts`` (n, k) up to ``t_end``.

    The batch is one flat ODE system, so thousands of starts cost one ``solve_ivp`` call.
    LSODA by default: far from the origin the flow is stiff (the loss curvature grows like
    exp(D)), where it takes ~5x fewer evaluations than explicit Runge-Kutta.
    Returns ``(t, path)`` with ``path`` of shape (len(t), n, k); ``t`` is ``t_eval`` when
    given, else just ``[0, t_end]``.
    """
    starts = np.atleast_2d(np.asarray(starts, dtype=float))
    n, k = starts.shape

    def rhs(_t, flat):
        return -gradient(flat.reshape(k, n)).reshape(-1)

    if t_eval is None:
        t_eval = np.array([0.0, t_end])
    solution = solve_ivp(rhs, (0.0, t_end), starts.T.reshape(-1), method=method, t_eval=t_eval, rtol=rtol, atol=atol)
    if not solution.success:
        raise RuntimeError(f"gradient flow failed: {solution.message}")
    path = solution.y.reshape(k, n, -1).transpose(2, 1, 0)
    return solution.t, path


def clocked_field(chain, gap_derivatives: Callable) -> Gradient:
    """grad L / (1 + |Hess L|) for a model whose loss is F(D(theta)), as ``integrate_flow`` wants it.

    Dividing the field by a positive function changes only the flow's clock: orbits, limit
    points and the conserved energy are those of d theta/dt = -grad L. With
    ``|Hess L| <= F''(D) |grad D|^2 + |F'(D)| |Hess D|`` in the denominator the field's
    Jacobian stays of order one, so an explicit solver takes steps of order one wherever the
    batch is (the plain flow is stiff far from the origin and on the e = 0 plane at large |w|,
    which stalls the whole batch). ``gap_derivatives(*theta)`` returns (D, grad D, |Hess D|_F).
    """

    def field(state):
        gap, grad, hessian = gap_derivatives(*state)
        slope, curvature = chain.slope_and_curvature(gap)
        return slope * grad / (1.0 + curvature * np.sum(grad**2, axis=0) + np.abs(slope) * hessian)

    return field
