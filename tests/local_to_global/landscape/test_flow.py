"""The flow integrator and the clocked field on problems with closed-form answers (fast, float64)."""

import numpy as np
import pytest

from replication.papers.local_to_global.landscape import canonical
from replication.papers.local_to_global.landscape import canonical3d as attention
from replication.papers.local_to_global.landscape.flow import clocked_field, integrate_flow
from replication.papers.local_to_global.markov import MarkovChain

# Three starts of two coordinates each: (e, w) per row, as the models' flows take them.
STARTS = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.2]])


def rotation(state):
    """grad L = (y, -x) for state rows (x, y): the flow d/dt (x, y) = (-y, x) turns every start."""
    x, y = state
    return np.stack([y, -x])


def test_rotation_flow_equals_the_closed_form_at_every_requested_time():
    times = np.linspace(0, 2.0, 9)
    t, path = integrate_flow(rotation, STARTS, times[-1], t_eval=times)
    np.testing.assert_array_equal(t, times)
    assert path.shape == (len(times), len(STARTS), 2)
    cos, sin = np.cos(times)[:, None], np.sin(times)[:, None]
    x0, y0 = STARTS[:, 0], STARTS[:, 1]
    np.testing.assert_allclose(path[..., 0], x0 * cos - y0 * sin, rtol=0, atol=1e-9)
    np.testing.assert_allclose(path[..., 1], x0 * sin + y0 * cos, rtol=0, atol=1e-9)


def test_without_requested_times_the_path_is_the_start_and_the_end():
    t, path = integrate_flow(lambda state: state * np.array([[1.0], [3.0]]), STARTS, 1.5)
    np.testing.assert_array_equal(t, [0.0, 1.5])
    np.testing.assert_allclose(path[0], STARTS, rtol=1e-12)
    np.testing.assert_allclose(path[1], STARTS * np.exp([-1.5, -4.5]), rtol=1e-9)


@pytest.mark.parametrize("method", ["LSODA", "DOP853", "Radau"])
def test_every_method_and_a_single_start(method):
    t, path = integrate_flow(rotation, [0.0, 1.0], np.pi / 2, t_eval=[0.0, np.pi / 2], method=method)
    assert path.shape == (2, 1, 2)
    np.testing.assert_allclose(path[-1, 0], [-1.0, 0.0], atol=1e-7)


def test_tolerances_reach_the_solver():
    _, tight = integrate_flow(rotation, STARTS, 20.0)
    _, loose = integrate_flow(rotation, STARTS, 20.0, rtol=1e-3, atol=1e-3)
    exact = np.stack([STARTS[:, 0] * np.cos(20) - STARTS[:, 1] * np.sin(20)])
    assert abs(tight[-1, :, 0] - exact).max() < 1e-8 < abs(loose[-1, :, 0] - exact).max()


def test_a_failing_solve_is_an_error():
    with pytest.raises(RuntimeError, match="gradient flow failed"):
        integrate_flow(lambda state: -(state**3), STARTS, 10.0, method="DOP853")  # blows up at t = 1/8


@pytest.mark.parametrize("model, dimension", [(canonical, 2), (attention, 3)])
def test_clocked_field_is_the_gradient_divided_by_the_curvature_bound(model, dimension):
    """grad L / (1 + F''(D)|grad D|^2 + |F'(D)| |Hess D|): the same direction, a known clock."""
    chain = MarkovChain(0.2, 0.3)
    state = np.random.default_rng(0).uniform(-1.5, 1.5, size=(dimension, 50))
    field = clocked_field(chain, model.gap_derivatives)(state)
    gradient = model.flow_gradient(chain)(state)
    gap, grad_gap, hessian = model.gap_derivatives(*state)
    bound = 1 + chain.loss_curvature(gap) * np.sum(grad_gap**2, axis=0) + np.abs(chain.loss_slope(gap)) * hessian
    assert field.shape == gradient.shape
    np.testing.assert_allclose(field * bound, gradient, rtol=1e-12, atol=1e-15)
    assert np.all(bound > 1)  # the clock only slows the flow down


def test_the_method_reaches_the_solver():
    """At loose tolerances each method makes its own errors: the paths differ, each near the circle."""
    paths = {
        method: integrate_flow(rotation, STARTS, 20.0, rtol=1e-4, atol=1e-4, method=method)[1][-1]
        for method in ("LSODA", "RK45", "DOP853")
    }
    exact = np.column_stack(
        [STARTS[:, 0] * np.cos(20) - STARTS[:, 1] * np.sin(20), STARTS[:, 0] * np.sin(20) + STARTS[:, 1] * np.cos(20)]
    )
    for path in paths.values():
        np.testing.assert_allclose(path, exact, atol=0.05)
    assert not np.allclose(paths["LSODA"], paths["RK45"], rtol=0, atol=1e-9)
    assert not np.allclose(paths["DOP853"], paths["RK45"], rtol=0, atol=1e-9)
    # the default is LSODA
    np.testing.assert_array_equal(integrate_flow(rotation, STARTS, 20.0, rtol=1e-4, atol=1e-4)[1][-1], paths["LSODA"])
