"""The tables of the phase diagram: measures.csv, one row per run (its measures, from its cell's
evaluations, and the structure of its final weights), and cells.csv, one row per (cell, init)
(medians, fractions on the plateau, noise and resolvability)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..markov import MarkovChain
from .grid import Cell
from .measures import CellOutputs, final_structure, gap, on_plateau_at, resolvable, run_measures
from .settings import PhaseSettings


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


def measure_runs(cells: dict[Cell, CellOutputs], phase: PhaseSettings) -> pd.DataFrame:
    """One row per run: the cell's columns, init, seed, steps run, ``run_measures`` and the structure
    of its final weights (``final_structure``). The runs' CPU seconds (in each cell's runs.csv, for
    phase.cost) stay out: what the figures and claims read is the same
    bytes on every rerun."""
    rows = []
    for cell, outputs in cells.items():
        costs = outputs.runs.set_index(["init", "seed"])
        for (init, seed), frame in outputs.evaluations.groupby(["init", "seed"], sort=False):
            cost = costs.loc[(init, seed)]
            rows.append(
                {
                    **chain_columns(cell.chain),
                    "init": init,
                    "seed": int(seed),
                    "steps_run": int(cost.steps_run),
                    "stopped_early": bool(cost.stopped_early),
                    **run_measures(frame, cell.chain, phase.measures, phase.stop.closed, tail=_tail(phase)),
                    **final_structure(outputs.final, init, int(seed)),
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
    for key, rows_of_cell in runs.groupby(["p", "q"], sort=False):
        noise_gap = float(np.sqrt((rows_of_cell.noise_gap**2).mean()))
        chain = Cell.keyed(*key).chain
        for init, group in rows_of_cell.groupby("init", sort=False):
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
