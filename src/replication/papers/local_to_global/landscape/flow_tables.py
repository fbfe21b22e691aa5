"""Flows of the canonical models as tidy tables, the data behind Figs. 1, 2 and 5."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.perturbation import perturb

from ..markov import MarkovChain
from . import canonical
from .flow import integrate_flow
from .settings import Canonical3dFlowSettings, Fig1Settings


def flows_for_chains(settings: Fig1Settings | Canonical3dFlowSettings, integrate, log) -> pd.DataFrame:
    """Flows for every chain of ``settings``, ``integrate(chain, rng)`` drawing from one seeded stream."""
    rng = np.random.default_rng(settings.seed)
    frames = []
    for chain in settings.chains:
        frame = integrate(chain, rng)
        ends = frame[frame.t == frame.t.max()]
        log.info("p=%s q=%s endpoints: %s", chain.p, chain.q, ends.endpoint.value_counts().to_dict())
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _trajectory_frame(chain: MarkovChain, t: np.ndarray, coordinates: dict, energy, loss, **per_start) -> pd.DataFrame:
    """Tidy rows (chain, trajectory, t, coordinates, energy, loss, per-start labels) of a batch of flows.

    ``coordinates``, ``energy`` and ``loss`` are (len(t), n) arrays; ``per_start`` values are (n,).
    """
    n = next(iter(coordinates.values())).shape[1]
    columns = {"p": chain.p, "q": chain.q, "trajectory": np.tile(np.arange(n), len(t)), "t": np.repeat(t, n)}
    columns.update({name: values.reshape(-1) for name, values in coordinates.items()})
    columns.update(energy=np.asarray(energy).reshape(-1), loss=np.asarray(loss).reshape(-1))
    columns.update({name: np.tile(values, len(t)) for name, values in per_start.items()})
    return pd.DataFrame(columns)


def fig1_flows(
    chain: MarkovChain, n: int, extent: float, flow_time: float, rng: np.random.Generator, samples: int = 200
) -> pd.DataFrame:
    """``n`` gradient-flow trajectories from uniform starts in the window, sampled in log time."""
    starts = perturb(rng.uniform(-0.9 * extent, 0.9 * extent, size=(n, 2)), f"fig1/{chain.p}/{chain.q}")
    times = np.concatenate([[0.0], np.geomspace(1e-3, flow_time, samples - 1)])
    t, path = integrate_flow(canonical.flow_gradient(chain), starts, flow_time, t_eval=times)
    e, w = path[..., 0], path[..., 1]
    return _trajectory_frame(
        chain,
        t,
        {"e": e, "w": w},
        energy=canonical.energy(e, w),
        loss=canonical.loss(chain, e, w),
        endpoint=canonical.classify_endpoint(chain, e[-1], w[-1]),
        predicted_basin=canonical.predicted_basin(chain, starts[:, 0], starts[:, 1]),
    )


def canonical3d_flows(
    chain: MarkovChain, n: int, sigma: float, flow_time: float, rng: np.random.Generator, samples: int = 200
) -> pd.DataFrame:
    """``n`` flows of the (e, w, a) model from N(0, sigma^2 I_3) starts, sampled in log time.

    Integrated with the clocked field (same orbits and limits as -grad L; near the origin the
    clock is the flow's own), so ``t`` is that clock.
    """
    from . import canonical3d
    from .flow import clocked_field

    # The noise stream keeps its first name ("attention/"), so that ensembles draw the same noise as the
    # blessed envelopes did.
    starts = perturb(sigma * rng.standard_normal((n, 3)), f"attention/{chain.p}/{chain.q}/{sigma}")
    times = np.concatenate([[0.0], np.geomspace(1e-2, flow_time, samples - 1)])
    field = clocked_field(chain, canonical3d.gap_derivatives)  # not stiff: explicit steps
    # atol tiny: relative accuracy where flows approach e = 0 or w = 0 geometrically
    t, path = integrate_flow(field, starts, flow_time, t_eval=times, atol=1e-30, method="DOP853")
    e, w, a = np.moveaxis(path, -1, 0)
    return _trajectory_frame(
        chain,
        t,
        {"e": e, "w": w, "a": a},
        energy=canonical3d.energy(e, w, a),
        loss=canonical3d.loss(chain, e, w, a),
        endpoint=canonical3d.classify_endpoint(chain, e[-1], w[-1], a[-1]),
    )
