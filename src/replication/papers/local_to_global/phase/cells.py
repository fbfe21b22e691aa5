"""Tables of the phase diagram: one row per run (its measures) and one per (cell, init) (medians,
fractions on the plateau, noise and resolvability), from the cells' evaluation files."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..markov import MarkovChain
from .measures import gap, on_plateau_at, resolvable, run_measures
from .settings import PhaseSettings


def canonical_prediction(init: str, p: float, q: float) -> bool | None:
    """Whether the canonical model predicts ``init`` to stay on the unigram plateau at (p, q):
    standard: p + q > 1 stays (the local minimum), p + q < 1 reaches the entropy rate; ours (region
    I* of Fig. 1): reaches it for p + q > 1, no prediction below the line."""
    above = p + q > 1
    if init == "standard":
        return above
    if init == "ours":
        return False if above else None
    return None


@dataclass(frozen=True)
class PredictionCheck:
    """One claim on the canonical prediction: for the cells where it predicts ``on_plateau`` for
    ``init``, the claim ``claim`` judges at ``step`` ("window" or "horizon") the column ``column``:
    true for a run (measures.csv) that agrees with the prediction; its mean over the seeds is the
    cell's column in cells.csv."""

    claim: str
    init: str
    on_plateau: bool
    step: str
    column: str


PREDICTION_CHECKS = (
    PredictionCheck("5w", "standard", True, "window", "on_plateau_window"),
    PredictionCheck("5h", "standard", True, "horizon", "on_plateau_horizon"),
    PredictionCheck("5r", "standard", False, "horizon", "reached"),
    PredictionCheck("5o", "ours", False, "horizon", "reached"),
)


def prediction_check(init: str, p: float, q: float, step: str) -> PredictionCheck | None:
    """The check that judges the cell (init, p, q) at ``step``; None where the canonical model
    predicts nothing there (the entropy rate is a fate, not a promise for the window)."""
    predicted = canonical_prediction(init, p, q)
    for check in PREDICTION_CHECKS:
        if (check.init, check.on_plateau, check.step) == (init, predicted, step):
            return check
    return None


def chain_columns(chain: MarkovChain) -> dict:
    """The cell's coordinates and the candidate explanations of its plateau."""
    return {
        "p": chain.p,
        "q": chain.q,
        "switching_distance": abs(chain.p + chain.q - 1),  # |p + q - 1|
        "gap": gap(chain),  # H(pi) - entropy rate
        "asymmetry": abs(chain.stationary[1] - 0.5),  # |pi1 - 1/2|
        "side": "p+q>1" if chain.p + chain.q > 1 else "p+q<1",
    }


def _tail(phase: PhaseSettings) -> int:
    """Evaluations at the end of a run over which its noise is measured: the stopping rule's patience
    (at least 3), where a stopped run sits at the entropy rate and a censored one on the plateau."""
    return max(3, phase.stop.patience // phase.eval_every)


def measure_runs(cells: dict[MarkovChain, tuple[pd.DataFrame, pd.DataFrame]], phase: PhaseSettings) -> pd.DataFrame:
    """One row per run: the cell's columns, init, seed, steps run, and ``run_measures``. The runs'
    CPU seconds (in each cell's runs.csv, for scripts/benchmarks/phase_diagram.py) stay out: what
    the figures and claims read is the same bytes on every rerun."""
    rows = []
    for chain, (evaluations, runs) in cells.items():
        costs = runs.set_index(["init", "seed"])
        for (init, seed), frame in evaluations.groupby(["init", "seed"], sort=False):
            cost = costs.loc[(init, seed)]
            rows.append(
                {
                    **chain_columns(chain),
                    "init": init,
                    "seed": int(seed),
                    "steps_run": int(cost.steps_run),
                    "stopped_early": bool(cost.stopped_early),
                    **run_measures(frame, chain, phase.measures, phase.stop.closed, tail=_tail(phase)),
                }
            )
    frame = pd.DataFrame(rows)
    frame["on_plateau_window"] = on_plateau_at(frame, phase.window)
    frame["on_plateau_horizon"] = on_plateau_at(frame, phase.horizon)
    return frame


def summarise_cells(runs: pd.DataFrame, phase: PhaseSettings) -> pd.DataFrame:
    """One row per (cell, init): seeds, median plateau length, fractions on the plateau at the window
    end and the horizon, the cell's pooled noise (both inits' runs) and whether it is resolvable."""
    rows = []
    for (p, q), cell in runs.groupby(["p", "q"], sort=False):
        noise_gap = float(np.sqrt((cell.noise_gap**2).mean()))
        chain = MarkovChain(p, q)
        for init, group in cell.groupby("init", sort=False):
            rows.append(
                {
                    **chain_columns(chain),
                    "init": init,
                    "seeds": len(group),
                    "median_plateau": float(group.plateau_length.median()),
                    "censored": int(group.censored.sum()),
                    "median_escape": float(group.escape.median()) if group.escaped.all() else np.nan,
                    "on_plateau_window": float(group.on_plateau_window.mean()),
                    "on_plateau_horizon": float(group.on_plateau_horizon.mean()),
                    "reached": float(group.reached.mean()),
                    "median_final_excess": float(group.final_excess.median()),
                    "noise_gap": noise_gap,
                    "noise_closed": float(group.noise_closed.median()),
                    "noise_closed_fixed": float(group.noise_closed_fixed.median()),
                    "resolvable": resolvable(gap(chain), noise_gap, phase.measures),
                    "steps_run": int(group.steps_run.sum()),
                    "steps_horizon": len(group) * phase.horizon,
                }
            )
    return pd.DataFrame(rows)
