"""The grid runner: columns, determinism, per-cell seeds, shards."""

import numpy as np
import pytest

from helpers import bo_model, schema_defaults, shared_scope
from replication.papers.benign_overfitting.grid import GRID_COLUMNS, run_cells
from replication.papers.benign_overfitting.settings import (
    Cell,
    GridSettings,
    Range,
    RunSettings,
    axis_values,
    grid_cells,
    settings,
    shards,
)

REQUIRED = [
    "d",
    "signal_norm",
    "seed",
    "steps",
    "train_loss",
    "test_loss",
    "train_accuracy",
    "test_accuracy",
    "eq9_ratio",
    "eq9_ratio_as_coded",
    "eq10_ratio",
    "eq10_ratio_as_coded",
]
SMALL = bo_model(n_test=200)


@pytest.fixture(scope=shared_scope)
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
    grid = GridSettings(Range(250, 5000, 250), Range(5, 100, 5), steps=10, seeds=(1, 2), shard_size=40)
    cells = grid_cells(grid)
    assert len(cells) == 800 and cells[0] == (250, 5.0, 1) and cells[-1] == (5000, 100.0, 2)
    assert axis_values(Range(5, 100, 5))[-1] == 100
    parts = shards(cells, 40)
    assert len(parts) == 20 and sum(parts, []) == cells
    assert len(shards(cells[:45], 20)[-1]) == 5


def test_each_row_holds_its_own_cells_quantities(table):
    """Recompute every column of each cell on its own (one run, no batch) and compare with its row."""
    from replication.papers.benign_overfitting import metrics
    from replication.papers.benign_overfitting.data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE
    from replication.papers.benign_overfitting.grid import cell_problem, evaluate_from_probabilities
    from replication.papers.benign_overfitting.train import evaluate, outputs, project_test_set, stack, train_gram

    for row, (d, m, seed) in zip(table.itertuples(), [(250, 5.0, 1), (250, 40.0, 1), (500, 20.0, 2)]):
        data, problem, test_rng = cell_problem(d, m, seed, SMALL)
        run = train_gram(*stack([problem]), SMALL.lr, 200)
        clean, y = ~data.noisy, data.y
        loss, accuracy = evaluate_from_probabilities(run.final_s[0], problem.gamma, y)
        assert (row.d, row.signal_norm, row.seed) == (d, m, seed)
        assert np.isclose(row.train_loss, loss) and np.isclose(row.train_accuracy, accuracy)
        assert np.isclose(row.eq9_ratio, metrics.eq9_ratio(run.pair_sum[0], clean, y))
        assert np.isclose(row.eq9_ratio_as_coded, metrics.eq9_ratio_as_coded(run.pair_sum[0], run.last_q[0], clean, y))
        assert np.isclose(row.eq10_ratio, metrics.eq10_ratio(run.pair_sum[0], clean, y))
        assert np.isclose(row.eq10_ratio_as_coded, metrics.eq10_ratio_as_coded(run.first_q[0], clean, y))
        assert np.isclose(
            row.eq10_ratio_as_coded_last, metrics.eq10_ratio_as_coded_last(run.pair_sum[0], run.last_q[0], clean, y)
        )
        assert (row.n_clean_plus, row.n_clean_minus) == ((clean & (y == 1)).sum(), (clean & (y == -1)).sum())
        chosen = data.roles[np.arange(len(y)), run.final_s[0].argmax(-1)]
        noisy = data.noisy
        assert row.noisy_fitted == (y * outputs(run.final_s[0], problem.gamma) > 0)[noisy].sum()
        assert row.noisy_on_weak_opposite == (chosen[noisy] == WEAK_OPPOSITE).sum()
        assert row.noisy_on_irrelevant == (chosen[noisy] == IRRELEVANT).sum()
        assert row.clean_on_relevant == (chosen[~noisy] == RELEVANT).sum()
        u, g, y_test = project_test_set(test_rng, run.a[0], problem, m, SMALL.n_test, SMALL.T, SMALL.rho, SMALL.noise)
        test_loss, test_accuracy = evaluate(u, g, y_test)
        assert np.isclose(row.test_loss, test_loss) and np.isclose(row.test_accuracy, test_accuracy)
    # the cells differ: a row mix-up would show
    assert table.eq9_ratio.nunique() == 3 and table.train_loss.nunique() == 3


def test_settings_from_the_validated_config():
    config = schema_defaults()
    config["benign_overfitting"]["model"].update(n=10, T=6, lr=1e-3, noise="bernoulli")
    typed = settings(config["benign_overfitting"])
    assert typed.model == RunSettings(10, 6, 0.2, 0.2, 1e-3, 1000, "bernoulli")
    assert typed.trajectories.runs["b"] == Cell(4500, 5.0) and typed.grid.seeds == (1, 2, 3, 4, 5)
    assert typed.grid.dims == Range(250, 5000, 250) and typed.fig1.scales["harmful"] == 1.0
    # Every field comes from the config: a missing or unknown key is an error, never a default.
    with pytest.raises(ValueError, match="RunSettings: missing noise; unknown other"):
        config["benign_overfitting"]["model"]["other"] = config["benign_overfitting"]["model"].pop("noise")
        settings(config["benign_overfitting"])
    assert axis_values(Range(0.5, 1.0, 0.25)) == [0.5, 0.75, 1.0]


def test_progress_counts_cells_and_noise_model_reaches_the_data():
    from replication.papers.benign_overfitting.data import cell_seed, sample_gram_data, train_test_generators
    from replication.papers.benign_overfitting.grid import cell_problem

    class Counter:
        total = 0

        def update(self, k):
            self.total += k

    counter = Counter()
    cells = [(250, 5.0, 1), (250, 10.0, 1), (250, 15.0, 1)]
    run_cells(cells, bo_model(n_test=20), 5, batch_cells=2, progress=counter)
    assert counter.total == 3
    model = bo_model(noise="bernoulli", eta=0.4)
    data, _, _ = cell_problem(250, 5.0, 3, model)
    train_rng, _ = train_test_generators(cell_seed(3, 250, 5.0))
    expected = sample_gram_data(train_rng, model.n, model.T, 250, 5.0, model.rho, model.eta, "bernoulli")
    assert np.array_equal(data.noisy, expected.noisy) and np.array_equal(data.gram, expected.gram)


def test_train_columns_agree_with_the_logits_of_the_trained_parameter():
    """Train loss, accuracy and fitted noisy samples of each row, recomputed from the trained
    coefficients: logits K a, softmax, margins y f (lr 0.05 so that noisy samples get fitted)."""
    from replication.papers.benign_overfitting.grid import cell_problem
    from replication.papers.benign_overfitting.model import softmax
    from replication.papers.benign_overfitting.train import evaluate, outputs, stack, train_gram

    model = bo_model(lr=0.05, n_test=50)
    cells = [(250, 5.0, 1), (300, 10.0, 2)]
    table = run_cells(cells, model, 200, batch_cells=2)
    for row, (d, m, seed) in zip(table.itertuples(), cells):
        data, problem, _ = cell_problem(d, m, seed, model)
        run = train_gram(*stack([problem]), model.lr, 200)
        n, T = problem.gamma.shape
        logits = (problem.gram @ run.a[0]).reshape(n, T)
        margin = problem.y * outputs(softmax(logits), problem.gamma)
        assert np.isclose(row.train_loss, np.mean(np.log1p(np.exp(-margin))), rtol=1e-10)
        assert np.isclose(row.train_loss, evaluate(logits, problem.gamma, problem.y)[0], rtol=1e-10)
        assert row.train_accuracy == np.mean(margin > 0)
        assert row.noisy_fitted == (margin[data.noisy] > 0).sum()
    # some noisy samples are fitted and, in the second cell, not all: the counts are not trivial
    assert table.noisy_fitted.min() > 0 and table.train_accuracy.iloc[1] < 1


def test_the_paper_noise_model_reaches_the_test_set():
    from replication.papers.benign_overfitting.grid import cell_problem
    from replication.papers.benign_overfitting.train import evaluate, project_test_set, stack, train_gram

    model = bo_model(noise="bernoulli", n_test=100, lr=0.05)
    table = run_cells([(250, 10.0, 1)], model, 50, batch_cells=1)
    losses = {}
    for noise in ("bernoulli", "exact"):
        _, problem, test_rng = cell_problem(250, 10.0, 1, model)
        run = train_gram(*stack([problem]), model.lr, 50)
        u, g, y = project_test_set(test_rng, run.a[0], problem, 10.0, model.n_test, model.T, model.rho, noise)
        losses[noise] = evaluate(u, g, y)[0]
    assert np.isclose(table.test_loss.iloc[0], losses["bernoulli"], rtol=1e-12)
    assert not np.isclose(losses["exact"], losses["bernoulli"], rtol=1e-6)


def test_no_cells_give_an_empty_table_with_the_grid_columns():
    table = run_cells([], SMALL, 10, batch_cells=2)
    assert list(table.columns) == GRID_COLUMNS and len(table) == 0


def test_a_tie_is_an_error_and_a_correct_sign_is_a_fit():
    """Accuracy counts y f > 0: an output of exactly 0 fits neither label (loss log 2)."""
    from replication.papers.benign_overfitting.grid import evaluate_from_probabilities

    s = np.array([[0.5, 0.5], [0.5, 0.5], [1.0, 0.0]])
    gamma = np.array([[1.0, -1.0], [2.0, 1.0], [-3.0, 0.0]])  # outputs 0, 1.5, -3
    loss, accuracy = evaluate_from_probabilities(s, gamma, np.array([1.0, 1.0, -1.0]))
    assert accuracy == pytest.approx(2 / 3)
    assert loss == pytest.approx((np.log(2) + np.log1p(np.exp(-1.5)) + np.log1p(np.exp(-3.0))) / 3)
