"""The grid runner: columns, determinism, per-cell seeds, shards."""
import numpy as np
import pytest

from replication.benign_overfitting.grid import GRID_COLUMNS, Model, axis_values, grid_cells, run_cells, shards

REQUIRED = ["d", "signal_norm", "seed", "steps", "train_loss", "test_loss", "train_accuracy", "test_accuracy",
            "eq9_ratio", "eq9_ratio_as_coded", "eq10_ratio", "eq10_ratio_as_coded"]
SMALL = Model(n_test=200)


@pytest.fixture(scope="module")
def table():
    return run_cells([(250, 5.0, 1), (250, 40.0, 1), (500, 20.0, 2)], SMALL, 200, batch_cells=2)


def test_grid_columns_and_values(table):
    assert list(table.columns) == GRID_COLUMNS and set(REQUIRED) <= set(table.columns)
    assert len(table) == 3 and (table.steps == 200).all()
    assert table[["train_loss", "test_loss"]].gt(0).all().all()
    assert table.train_accuracy.between(0, 1).all() and table.test_accuracy.between(0, 1).all()
    assert (table.n_clean_plus + table.n_clean_minus + table.n_noisy == SMALL.n).all()
    assert (table.n_noisy == 4).all()


def test_grid_is_deterministic_and_independent_of_batching(table):
    again = run_cells([(250, 5.0, 1), (250, 40.0, 1), (500, 20.0, 2)], SMALL, 200, batch_cells=3)
    assert table.equals(again)
    alone = run_cells([(250, 40.0, 1)], SMALL, 200, batch_cells=1)
    assert np.allclose(alone.iloc[0, 1:].astype(float), table.iloc[1, 1:].astype(float), rtol=0, atol=0)


def test_cells_and_shards():
    settings = {"dims": {"start": 250, "stop": 5000, "step": 250}, "signal_norms": {"start": 5, "stop": 100, "step": 5},
                "seeds": [1, 2]}
    cells = grid_cells(settings)
    assert len(cells) == 800 and cells[0] == (250, 5.0, 1) and cells[-1] == (5000, 100.0, 2)
    assert axis_values({"start": 5, "stop": 100, "step": 5})[-1] == 100
    parts = shards(cells, 40)
    assert len(parts) == 20 and sum(parts, []) == cells
    assert len(shards(cells[:45], 20)[-1]) == 5
