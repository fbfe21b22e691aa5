"""Where gradient flows of the canonical models end, measured from many starts, and claims 1-4.

Both models share one interface (``gap_derivatives``, ``energy``, ``loss``, ``classify_endpoint``
taking the coordinates in order), so every function here takes the model by name.
"""

from __future__ import annotations

from functools import partial
from types import ModuleType

import numpy as np
import pandas as pd
from tqdm import tqdm

from replication.claims import Claim
from replication.perturbation import perturb

from .. import PAPER
from ..markov import MarkovChain
from . import canonical, canonical3d
from .flow import clocked_field, integrate_flow
from .settings import BasinSettings

MODELS: dict[str, ModuleType] = {"2d": canonical, "3d": canonical3d}
DIMENSION = {"2d": 2, "3d": 3}
SETTLED = (canonical.GLOBAL_MIN, canonical.LOCAL_MIN, canonical.LOCAL_MAX)
# Flows approach e = 0 and w = 0 geometrically; the energy's log|w| needs relative accuracy
# there, so the absolute tolerance must not take over. The clocked field is not stiff, so an
# explicit solver needs no Jacobian (an implicit one would build a dense (nk)^2 one).
ATOL = 1e-30


def relative_drift(energy: np.ndarray, start: np.ndarray) -> np.ndarray:
    """|E - E0| / max(|E0|, 1): relative, but not blown up where a start's energy is near 0."""
    return np.abs(energy - start) / np.maximum(np.abs(start), 1.0)


def flow_endpoints(
    chain: MarkovChain, model: str, starts: np.ndarray, flow_time: float, rounds: int = 4
) -> pd.DataFrame:
    """Integrate the flow from ``starts`` (n, k) and label where each one ends.

    Starts that have not settled on a critical set by ``flow_time`` (slow approaches to the
    saddle line) continue for up to ``rounds`` horizons in all. Returns one row per start: the
    endpoint, its label, its loss and the largest relative energy drift seen along the way.
    """
    module = MODELS[model]
    field = clocked_field(chain, module.gap_derivatives)
    ends = np.array(starts, dtype=float, copy=True)
    start_energy = module.energy(*ends.T)
    drift = np.zeros(len(ends))
    labels = np.full(len(ends), canonical.UNCONVERGED, dtype=object)
    todo = np.arange(len(ends))
    times = flow_time * np.array([0.0, 1e-3, 1e-2, 1e-1, 1.0])
    for _ in range(rounds):
        if not len(todo):
            break
        _, path = integrate_flow(field, ends[todo], flow_time, t_eval=times, atol=ATOL, method="DOP853")
        energies = module.energy(*np.moveaxis(path, -1, 0))
        drift[todo] = np.maximum(drift[todo], relative_drift(energies, start_energy[todo]).max(axis=0))
        ends[todo] = path[-1]
        labels[todo] = module.classify_endpoint(chain, *path[-1].T)
        todo = todo[~np.isin(labels[todo], SETTLED)]
    frame = pd.DataFrame(ends, columns=["e", "w", "a"][: ends.shape[1]])
    frame["endpoint"] = labels
    frame["loss"] = module.loss(chain, *ends.T)
    frame["energy_drift"] = drift
    return frame


def endpoint_loss_error(chain: MarkovChain, ends: pd.DataFrame) -> float:
    """Largest |loss - H(pi)| over local-minimum endpoints and |loss - entropy rate| over global ones."""
    local = ends.loss[ends.endpoint == canonical.LOCAL_MIN] - chain.unigram_loss
    glob = ends.loss[ends.endpoint == canonical.GLOBAL_MIN] - chain.bigram_loss
    errors = np.abs(np.concatenate([local, glob]))
    return float(errors.max()) if len(errors) else np.nan


def measure_basins(settings: BasinSettings, log=None) -> pd.DataFrame:
    """Fractions of N(0, sigma^2 I) starts ending at a local minimum, per model, chain and sigma.

    One standard-normal draw (n, 3) is scaled by every sigma and shared by all chains, and the
    2-D model uses its first two columns (e, w): the curves against sigma and the 2-D/3-D
    comparison are paired, not independent samples.
    """
    normal = perturb(np.random.default_rng(settings.seed).standard_normal((settings.n_starts, 3)), "basins")
    jobs = [(model, chain, sigma) for chain in settings.chains for sigma in settings.sigmas for model in MODELS]
    rows = []
    for model, chain, sigma in tqdm(jobs, desc="basins", mininterval=5):
        starts = sigma * normal[:, : DIMENSION[model]]
        ends = flow_endpoints(chain, model, starts, settings.flow_time, settings.rounds)
        local = ends.endpoint == canonical.LOCAL_MIN
        row = {
            "model": model,
            "p": chain.p,
            "q": chain.q,
            "sigma": sigma,
            "n_starts": len(starts),
            "fraction_local_min": local.mean(),
            "fraction_global_min": (ends.endpoint == canonical.GLOBAL_MIN).mean(),
            "fraction_other": (~ends.endpoint.isin([canonical.LOCAL_MIN, canonical.GLOBAL_MIN])).mean(),
            "fraction_local_min_theory": np.nan,
            "fraction_agreeing_with_theory": np.nan,
            "max_energy_drift": ends.energy_drift.max(),
            "max_endpoint_loss_error": endpoint_loss_error(chain, ends),
        }
        if model == "2d":
            predicted = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1])
            row["fraction_local_min_theory"] = np.mean(predicted == canonical.LOCAL_MIN)
            row["fraction_agreeing_with_theory"] = np.mean(predicted == ends.endpoint.to_numpy())
        rows.append(row)
        if log:
            log.info(
                "%s p=%g q=%g sigma=%g: local %.3f theory %s",
                model,
                chain.p,
                chain.q,
                sigma,
                row["fraction_local_min"],
                row["fraction_local_min_theory"],
            )
    return pd.DataFrame(rows)


def starting_grid(points: int, extent: float, margin: float) -> np.ndarray:
    """(e, w) on a grid, away from the measure-zero sets where Thms 2/8 are silent or exact ties:
    the axes e = 0 and w = 0 and the saddle's flow lines |e| = g(w)."""
    w, e = (a.ravel() for a in np.meshgrid(np.linspace(-extent, extent, points), np.linspace(-extent, extent, points)))
    g = np.nan_to_num(canonical.separatrix(w), nan=-np.inf)
    keep = (np.abs(e) > margin) & (np.abs(w) > margin) & (np.abs(np.abs(e) - g) > margin)
    return np.column_stack([e[keep], w[keep]])


def grid_agreement(settings: BasinSettings) -> pd.DataFrame:
    """Per chain: 2-D flow endpoints from a grid of starts against the basins of Thms 2/8."""
    grid = settings.grid
    starts = starting_grid(grid.points, grid.extent, grid.margin)
    rows = []
    for chain in settings.chains:
        ends = flow_endpoints(chain, "2d", starts, settings.flow_time, settings.rounds)
        predicted = canonical.predicted_basin(chain, starts[:, 0], starts[:, 1])
        rows.append(
            {
                "p": chain.p,
                "q": chain.q,
                "n_starts": len(starts),
                "agreeing": int(np.sum(predicted == ends.endpoint.to_numpy())),
                "max_energy_drift": ends.energy_drift.max(),
                "max_endpoint_loss_error": endpoint_loss_error(chain, ends),
            }
        )
    return pd.DataFrame(rows)


def landscape_claims(basins: pd.DataFrame, grid: pd.DataFrame, settings: BasinSettings) -> list[Claim]:
    """Claims 1-4 of the spec's section 5 from the basin runs and the grid of 2-D starts."""
    tol = settings.claims
    claim = partial(Claim, PAPER.name)
    agree = grid.agreeing.sum() / grid.n_starts.sum()
    worst = grid.loc[(grid.agreeing / grid.n_starts).idxmin()]
    claims = [
        claim(
            "1",
            "Fig. 1",
            "Gradient-flow endpoints from a grid of (e, w) starts match the basins of Thms 2/8.",
            float(agree),
            "fraction agreeing = 1",
            bool(agree == 1.0),
            f"{int(grid.agreeing.sum())}/{int(grid.n_starts.sum())} starts over {len(grid)} chains; "
            f"worst p={worst.p:g}, q={worst.q:g}: {int(worst.agreeing)}/{int(worst.n_starts)}",
            spec="L2G-1",
        )
    ]
    drift = float(max(basins.max_energy_drift.max(), grid.max_energy_drift.max()))
    by_model = basins.groupby("model").max_energy_drift.max()
    claims.append(
        claim(
            "2",
            "Figs. 1, 2",
            "Energy is constant along the gradient flow, 2-D and 3-D (relative to max(|E0|, 1)).",
            drift,
            f"max relative drift < {tol.energy_drift:g}",
            bool(drift < tol.energy_drift),
            f"every basin start and grid start; 2-D {by_model.get('2d', np.nan):.1e}, "
            f"3-D {by_model.get('3d', np.nan):.1e}",
            spec="L2G-2",
        )
    )
    error = float(np.nanmax(np.r_[basins.max_endpoint_loss_error, grid.max_endpoint_loss_error]))
    claims.append(
        claim(
            "3",
            "Figs. 1, 2",
            "Endpoint losses: H(pi) at local minima, the entropy rate at global minima.",
            error,
            f"max |loss - reference| < {tol.endpoint_loss:g}",
            bool(error < tol.endpoint_loss),
            "every endpoint on a minimum, both models, every chain and sigma",
            spec="L2G-3",
        )
    )
    small = basins[basins.sigma <= tol.small_sigma]
    above = small[small.p + small.q > 1]
    below = small[small.p + small.q < 1]
    low = float(above.fraction_local_min.min()) if len(above) else np.nan
    high = float(below.fraction_local_min.max()) if len(below) else np.nan
    sigmas = ", ".join(f"{s:g}" for s in sorted(small.sigma.unique())) or "none"
    claims += [
        claim(
            "4a",
            "Figs. 2, 5",
            f"p+q>1, starts N(0, sigma^2 I) with sigma <= {tol.small_sigma:g}: the flow ends at a local minimum.",
            low,
            f"min fraction >= {tol.fraction_high:g}",
            bool(low >= tol.fraction_high),
            f"2-D and 3-D, sigma in {{{sigmas}}}, {len(above)} runs of {int(basins.n_starts.max())} starts"
            if len(above)
            else "no run with p+q>1 and a small sigma in the config",
            spec="L2G-4",
        ),
        claim(
            "4b",
            "Figs. 2, 5",
            f"p+q<1, starts N(0, sigma^2 I) with sigma <= {tol.small_sigma:g}: the flow avoids local minima.",
            high,
            f"max fraction <= {tol.fraction_low:g}",
            bool(high <= tol.fraction_low),
            f"2-D and 3-D, sigma in {{{sigmas}}}, {len(below)} runs of {int(basins.n_starts.max())} starts"
            if len(below)
            else "no run with p+q<1 and a small sigma in the config",
            spec="L2G-4",
        ),
    ]
    return claims
