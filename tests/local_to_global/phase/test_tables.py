"""The phase tables' columns: a cell's coordinates and candidate explanations of its plateau
(switching distance, gap, asymmetry, side of the line), and the run table's columns in order, each
run with the steps it ran."""

import numpy as np
import pandas as pd
import pytest

from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.phase.grid import Cell
from replication.papers.local_to_global.phase.measures import CellOutputs, gap
from replication.papers.local_to_global.phase.settings import MeasureSettings, PhaseSettings, StopSettings
from replication.papers.local_to_global.phase.tables import chain_columns, measure_runs


@pytest.mark.parametrize(
    "p, q, switching_distance, pi1, side",
    [(0.8, 0.7, 0.5, 0.8 / 1.5, "p+q>1"), (0.2, 0.3, 0.5, 0.4, "p+q<1"), (0.9, 0.6, 0.5, 0.6, "p+q>1"),
     (0.1, 0.6, 0.3, 1 / 7, "p+q<1")],
)  # fmt: skip
def test_a_cells_columns_are_its_coordinates_and_its_plateaus_candidate_explanations(
    p, q, switching_distance, pi1, side
):
    chain = MarkovChain(p, q)
    columns = chain_columns(chain)
    assert list(columns) == ["p", "q", "switching_distance", "gap", "asymmetry", "side"]
    assert (columns["p"], columns["q"], columns["side"]) == (p, q, side)
    assert columns["switching_distance"] == pytest.approx(switching_distance, abs=1e-12)
    assert columns["gap"] == gap(chain) == pytest.approx(chain.unigram_loss - chain.bigram_loss)
    assert columns["asymmetry"] == pytest.approx(abs(pi1 - 0.5), abs=1e-12)


def _evaluations(steps):
    """A run's evaluations that close the gap linearly from the plateau (0) to the entropy rate (1)."""
    chain = MarkovChain(0.8, 0.7)
    closed = np.linspace(0.0, 1.0, len(steps))
    return pd.DataFrame(
        {
            "step": steps,
            "test_loss": chain.unigram_loss - closed * gap(chain),
            "chain_loss": chain.bigram_loss,
            "unigram_loss": chain.unigram_loss,
        }
    )


def test_the_run_table_has_every_column_and_each_runs_steps():
    measures = MeasureSettings(escape=0.5, drop=0.5, smooth=1, resolution=10.0)
    phase = PhaseSettings(
        p=(0.8,), q=(0.7,), inits=("standard",), seeds=(1, 2), horizon=100, eval_every=10, window=50,
        stop=StopSettings(closed=0.9, patience=20), measures=measures,
    )  # fmt: skip
    runs = (("standard", 1, 60), ("standard", 2, 100))
    evaluations = pd.concat(
        [_evaluations(np.arange(0, last + 1, 10)).assign(init=init, seed=seed) for init, seed, last in runs]
    )
    table = pd.DataFrame(
        [{"init": init, "seed": seed, "steps_run": last, "stopped_early": last < 100} for init, seed, last in runs]
    )
    e = np.array([0.5, -0.5, 0.5, 0.5])
    weights = {"e": e, "W_1": np.outer(np.arange(1.0, 17.0), e), "W_V": np.outer(e, e)}
    final = {f"{init}/seed{seed}/{name}": value for init, seed, _ in runs for name, value in weights.items()}
    frame = measure_runs({Cell.keyed(0.8, 0.7): CellOutputs(evaluations, table, final)}, phase)
    assert list(frame.columns) == [
        "p", "q", "switching_distance", "gap", "asymmetry", "side", "init", "seed", "steps_run", "stopped_early",
        "last_step", "drop_end", "escaped", "escape", "plateau_length", "censored", "final_excess", "final_closed",
        "reached", "noise_gap", "noise_closed", "noise_closed_fixed", "share_W_1", "share_W_V", "cos_e_W_1",
        "cos_e_W_V", "on_plateau_window", "on_plateau_horizon",
    ]  # fmt: skip
    assert frame.steps_run.tolist() == [60, 100] and frame.last_step.tolist() == [60, 100]
    assert frame.stopped_early.tolist() == [True, False] and frame.reached.all()
    assert frame.escape.tolist() == [30.0, 50.0]  # half closed: half way through each run
    assert frame.share_W_1.tolist() == pytest.approx([1.0, 1.0])
